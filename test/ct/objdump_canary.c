/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Functions for check_objdump.sh to judge (test ct_objdump_canary): each
 * bad_* one branches on a value that left a vector or mask register, or
 * compares vectors into a branch, and must be reported; each good_* one
 * branches only on a general register the compiler parked in a vector or
 * mask register (the spill and reload pattern of register pressure) and
 * must pass. Never called: the object is only disassembled.
 */
#if defined(__x86_64__)
__asm__(
    ".text\n"

    /* a vector result moved to a general register, then a branch on it */
    ".globl bad_vector_value\n"
    ".type bad_vector_value, @function\n"
    "bad_vector_value:\n"
    "    vpaddq %xmm1, %xmm2, %xmm0\n"
    "    vmovq %xmm0, %rax\n"
    "    testq %rax, %rax\n"
    "    je 1f\n"
    "    incq %rcx\n"
    "1:  ret\n"
    ".size bad_vector_value, .-bad_vector_value\n"

    /* flags straight from a vector compare */
    ".globl bad_ptest\n"
    ".type bad_ptest, @function\n"
    "bad_ptest:\n"
    "    vptest %xmm1, %xmm0\n"
    "    jne 1f\n"
    "    incq %rcx\n"
    "1:  ret\n"
    ".size bad_ptest, .-bad_ptest\n"

    /* a spilled general register overwritten by vector work before the reload */
    ".globl bad_spill_clobbered\n"
    ".type bad_spill_clobbered, @function\n"
    "bad_spill_clobbered:\n"
    "    vmovq %rcx, %xmm1\n"
    "    vpaddq %xmm2, %xmm1, %xmm1\n"
    "    vmovq %xmm1, %rax\n"
    "    testq %rax, %rax\n"
    "    jne 1f\n"
    "    incq %rcx\n"
    "1:  ret\n"
    ".size bad_spill_clobbered, .-bad_spill_clobbered\n"

    /* overwritten with data on one of two paths to the reload */
    ".globl bad_spill_one_path\n"
    ".type bad_spill_one_path, @function\n"
    "bad_spill_one_path:\n"
    "    vmovq %rcx, %xmm1\n"
    "    testq %rdi, %rdi\n"
    "    je 1f\n"
    "    vmovdqu (%rsi), %xmm1\n"
    "1:  vmovq %xmm1, %rax\n"
    "    testq %rax, %rax\n"
    "    jne 2f\n"
    "    incq %rcx\n"
    "2:  ret\n"
    ".size bad_spill_one_path, .-bad_spill_one_path\n"

    /* overwritten in a loop body after the spill: the reload after the loop */
    ".globl bad_spill_loop\n"
    ".type bad_spill_loop, @function\n"
    "bad_spill_loop:\n"
    "    vmovq %rcx, %xmm1\n"
    "1:  vpxor (%rsi), %xmm1, %xmm1\n"
    "    addq $16, %rsi\n"
    "    decq %rdi\n"
    "    jne 1b\n"
    "    vmovq %xmm1, %rax\n"
    "    testq %rax, %rax\n"
    "    jne 2f\n"
    "    incq %rcx\n"
    "2:  ret\n"
    ".size bad_spill_loop, .-bad_spill_loop\n"

    /* the general register spilled held a vector value already */
    ".globl bad_spill_of_vector_value\n"
    ".type bad_spill_of_vector_value, @function\n"
    "bad_spill_of_vector_value:\n"
    "    vmovq %xmm5, %rcx\n"
    "    vmovq %rcx, %xmm1\n"
    "    vmovq %xmm1, %rax\n"
    "    testq %rax, %rax\n"
    "    jne 1f\n"
    "    incq %rcx\n"
    "1:  ret\n"
    ".size bad_spill_of_vector_value, .-bad_spill_of_vector_value\n"

    /* a call may leave anything in the vector registers */
    ".globl bad_spill_across_call\n"
    ".type bad_spill_across_call, @function\n"
    "bad_spill_across_call:\n"
    "    vmovq %rcx, %xmm1\n"
    "    call bad_ptest\n"
    "    vmovq %xmm1, %rax\n"
    "    testq %rax, %rax\n"
    "    jne 1f\n"
    "    incq %rcx\n"
    "1:  ret\n"
    ".size bad_spill_across_call, .-bad_spill_across_call\n"

    /* a masked merge into the register holding the spill */
    ".globl bad_spill_masked_merge\n"
    ".type bad_spill_masked_merge, @function\n"
    "bad_spill_masked_merge:\n"
    "    vmovq %rcx, %xmm1\n"
    "    vmovdqa64 %zmm2, %zmm1{%k1}\n"
    "    vmovq %xmm1, %rax\n"
    "    testq %rax, %rax\n"
    "    jne 1f\n"
    "    incq %rcx\n"
    "1:  ret\n"
    ".size bad_spill_masked_merge, .-bad_spill_masked_merge\n"

    /* a mask register spill changed by a mask operation */
    ".globl bad_kmask_changed\n"
    ".type bad_kmask_changed, @function\n"
    "bad_kmask_changed:\n"
    "    kmovq %rcx, %k1\n"
    "    kandq %k2, %k1, %k1\n"
    "    kmovq %k1, %rax\n"
    "    testq %rax, %rax\n"
    "    jne 1f\n"
    "    incq %rcx\n"
    "1:  ret\n"
    ".size bad_kmask_changed, .-bad_kmask_changed\n"

    /* a loop count parked in xmm1 across a vector loop, reloaded, branched on */
    ".globl good_spill_loop\n"
    ".type good_spill_loop, @function\n"
    "good_spill_loop:\n"
    "    vmovq %rcx, %xmm1\n"
    "    xorl %eax, %eax\n"
    "1:  vpaddq %xmm2, %xmm3, %xmm2\n"
    "    addq $1, %rax\n"
    "    cmpq %rdi, %rax\n"
    "    jne 1b\n"
    "    vmovq %xmm1, %rax\n"
    "    testq %rax, %rax\n"
    "    je 2f\n"
    "    incq %rcx\n"
    "2:  ret\n"
    ".size good_spill_loop, .-good_spill_loop\n"

    /* moved to another vector register while xmm1 holds data, and back */
    ".globl good_spill_copied\n"
    ".type good_spill_copied, @function\n"
    "good_spill_copied:\n"
    "    vmovq %rcx, %xmm1\n"
    "    vmovdqa %xmm1, %xmm13\n"
    "1:  vmovdqu (%rsi), %xmm1\n"
    "    vpaddq %xmm1, %xmm2, %xmm2\n"
    "    decq %rdi\n"
    "    jne 1b\n"
    "    vmovdqa %xmm13, %xmm1\n"
    "    vmovq %xmm1, %rax\n"
    "    testq %rax, %rax\n"
    "    je 2f\n"
    "    incq %rcx\n"
    "2:  ret\n"
    ".size good_spill_copied, .-good_spill_copied\n"

    /* a flag: zeroed as a vector on one path, a spilled register on the other */
    ".globl good_spill_or_zero\n"
    ".type good_spill_or_zero, @function\n"
    "good_spill_or_zero:\n"
    "    vpxord %xmm27, %xmm27, %xmm27\n"
    "    testq %rdi, %rdi\n"
    "    jne 1f\n"
    "    xorl %edx, %edx\n"
    "    cmpq %rsi, %rcx\n"
    "    setb %dl\n"
    "    vmovd %edx, %xmm27\n"
    "1:  vpaddq %zmm2, %zmm3, %zmm4\n"
    "    vmovd %xmm27, %eax\n"
    "    testl %eax, %eax\n"
    "    jne 2f\n"
    "    incq %rcx\n"
    "2:  ret\n"
    ".size good_spill_or_zero, .-good_spill_or_zero\n"

    /* a mask register as a spill slot */
    ".globl good_kmask_spill\n"
    ".type good_kmask_spill, @function\n"
    "good_kmask_spill:\n"
    "    kmovq %rcx, %k3\n"
    "    vpaddq %zmm2, %zmm3, %zmm4\n"
    "    kmovq %k3, %rax\n"
    "    testq %rax, %rax\n"
    "    jne 1f\n"
    "    incq %rcx\n"
    "1:  ret\n"
    ".size good_kmask_spill, .-good_kmask_spill\n");
#else
typedef int chapoly_objdump_canary_unused; /* x86 instructions only */
#endif
