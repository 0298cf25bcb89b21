# SPDX-License-Identifier: Apache-2.0
# seal.png from two bench_evp runs: evp.csv (kernel avx512, OpenSSL unrestricted)
# and evp-avx2.csv (--avx2: chapoly's avx2 kernel, OpenSSL without AVX-512).
# Run from this directory: cd bench/results && gnuplot seal.gp
# (bench_evp --plot draws one run only; this overwrites its seal.png.)
sel(f, impl) = sprintf("< awk -F, '$1==\"seal\" && $3==\"%s\" && $4==\"ok\" {print $2, $10}' %s", impl, f)
set terminal pngcairo size 960,600 noenhanced font ',10'
set output 'seal.png'
set title 'ChaCha20-Poly1305 seal through EVP (13-byte AAD, fresh nonce), OpenSSL 3.0.22, AMD EPYC Zen 4 class, median of 5'
set xlabel 'message bytes'
set ylabel 'MB/s (10^6 bytes/s)'
set logscale x 2
set logscale y 10
set format x '%.0f'
set grid
set key left top
plot sel('evp.csv', 'chapoly') using 1:2 with linespoints lw 2 lc rgb '#1f77b4' title 'chapoly avx512', \
     sel('evp-avx2.csv', 'chapoly') using 1:2 with linespoints lw 2 dt 2 lc rgb '#1f77b4' title 'chapoly avx2', \
     sel('evp.csv', 'default') using 1:2 with linespoints lw 2 lc rgb '#d62728' title 'default provider', \
     sel('evp-avx2.csv', 'default') using 1:2 with linespoints lw 2 dt 2 lc rgb '#d62728' title 'default provider, AVX2-limited', \
     sel('evp.csv', 'boringssl') using 1:2 with linespoints lw 2 lc rgb '#2ca02c' title 'BoringSSL (no AVX-512 code)', \
     sel('evp.csv', 'libsodium') using 1:2 with linespoints lw 2 lc rgb '#7f7f7f' title 'libsodium'
