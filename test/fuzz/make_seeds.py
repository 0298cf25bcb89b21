#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the small seed corpora in corpus/<target>/ (run from any directory).

The seeds only have to reach the interesting shapes quickly (both AEADs,
every kernel level, counter wraps, forged tags, dup/in-place/EVP_Cipher
pieces, TLS records, odd parameter types); the fuzzer mutates from there.
The byte layouts are documented at the top of each fuzz_<target>.c.
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def ln(n):
    """fz_len encoding of an exact length (mode 3: raw u16)."""
    if n < 64:
        return bytes([n])
    return bytes([0xC0]) + struct.pack("<H", n)


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def key(i):
    return bytes((i * 7 + j) & 0xFF for j in range(32))


# ---- aead: alg/level, key, nonce, taglen, forge, bitpos, modes, aadlen, len, pattern, seed, program
def aead(xch, level, taglen_sel, forge, modes, aadlen, tlen, pattern, program):
    nonce = bytes(range(24 if xch else 12))
    return (bytes([(level << 1) | xch]) + key(level) + nonce + bytes([taglen_sel, forge])
            + struct.pack("<H", 77) + bytes([modes]) + ln(aadlen) + ln(tlen)
            + bytes([pattern]) + struct.pack("<Q", 0x1234 + level) + program)


prog_small = b"".join(bytes([ctl]) + ln(n) for ctl, n in
                      [(0, 5), (8, 8), (1, 7), (2, 64), (4, 1), (17, 63), (3, 65), (0, 200)])
for lv in range(4):
    write("aead", "chacha_l%d" % lv, aead(0, lv, 0x80, 0, 0x00, 13, 300, 0, prog_small))
    write("aead", "xchacha_l%d" % lv, aead(1, lv, 0x80, 0, 0x45, 40, 1100, 1, prog_small))
write("aead", "empty", aead(0, 0, 0x80, 0, 0, 0, 0, 0, b""))
write("aead", "forged_tag", aead(0, 1, 0x03, 4, 0x12, 7, 129, 2, prog_small))
write("aead", "forged_ct", aead(1, 2, 0x80, 5, 0x2B, 16, 513, 0, prog_small))
write("aead", "forged_aad", aead(0, 3, 0x80, 6, 0xB7, 33, 64, 3, prog_small))
write("aead", "short_ct", aead(0, 0, 0x80, 7, 0x98, 0, 1025, 0, b""))
write("aead", "big_onepiece", aead(0, 3, 0x80, 0, 0xF0, 5, 16400, 0, b""))
for lv in range(4):
    write("aead", "tls_l%d" % lv, aead(0, lv, 0x80, 0x08, 0, 11, 200 + 300 * lv, 0, b""))
write("aead", "tls_forged_tag", aead(0, 1, 0x80, 0x0C, 0, 11, 33, 0, b""))
write("aead", "tls_forged_ct", aead(0, 2, 0x80, 0x0D, 0, 11, 1500, 0, b""))
write("aead", "tls_empty", aead(0, 3, 0x80, 0x08, 0, 11, 0, 0, b""))

# ---- chacha20: level, key, mode, counter material, nonce, len, seed, program
def chacha(level, mode, mat, tlen, program):
    return (bytes([level]) + key(level + 9) + bytes([mode]) + struct.pack("<I", mat)
            + bytes(range(12)) + ln(tlen) + struct.pack("<Q", 99) + program)


prog_c = b"".join(bytes([ctl]) + ln(n) for ctl, n in
                  [(0, 1), (1, 63), (2, 64), (4, 129), (8, 511), (16, 7), (3, 1000)])
for lv in range(4):
    write("chacha20", "wrap_l%d" % lv, chacha(lv, 0x00, 3, 700, prog_c))
write("chacha20", "wrap_carry", chacha(1, 0x04, 1, 300, prog_c))
write("chacha20", "wrap_far", chacha(2, 0x01, 200, 16000, b""))
write("chacha20", "raw_counter", chacha(3, 0x0A, 0xFFFFFFF0, 2000, prog_c))

# ---- poly1305: level, mode, key, len, seed/raw bytes, program
def poly(level, mode, tlen, raw, program):
    body = raw if (mode & 0x80) else struct.pack("<Q", 7)
    return bytes([level, mode]) + key(level + 3) + ln(tlen) + body + program


prog_p = b"".join(bytes([ctl]) + ln(n) for ctl, n in [(0, 1), (2, 15), (1, 16), (0, 17), (0, 300)])
for lv in range(4):
    write("poly1305", "plain_l%d" % lv, poly(lv, 0x00, 1000, b"", prog_p))
write("poly1305", "max_key_ff", poly(1, 0x26, 4000, b"", prog_p))
write("poly1305", "s_ff_param_rekey", poly(2, 0x1F, 257, b"", prog_p))
write("poly1305", "raw_msg", poly(3, 0x80, 34, bytes(range(34)), prog_p))

# ---- params: sessions of (pick, ops...)
def pset(entries):
    out = bytes([len(entries)])
    for name_sel, type_sel, data in entries:
        out += bytes([name_sel, type_sel]) + data
    return out


ops = (bytes([2, 0x00, 1]) + pset([]) +            # einit, key 32, iv 12
       bytes([1]) + pset([(0, 0x7F, b""), (3, 0x85, b""), (5, 0x05, b"")]) +
       bytes([0]) + pset([(4, 0x7F, b"\x20" + b"\x00" * 7), (7, 0x4C, bytes(13))]) +
       bytes([4, 0x00]) + ln(40) + b"\x01" +
       bytes([5, 0x00]) + bytes([7 | 0x80]) + bytes([11]) + bytes(13) + b"\x01" +
       bytes([6, 0x60]) + ln(17) + b"\x02")
for pick in range(0, 16, 3):
    write("params", "session_%d" % pick, bytes([pick]) + ops)
write("params", "provider_params", bytes([255, 0]) + pset([(9, 0x7D, b""), (1, 0xFF, b"")]))
