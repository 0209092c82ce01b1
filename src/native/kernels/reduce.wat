;; The compute kernels of torus, one module over one imported shared memory. First the device-speed matmul (the
;; placement cost model's FLOP/s figure and the pipeline workload's compute run it), then the reduction kernels
;; of the ring collectives: dst[i] = op(dst[i], src[i]) over n elements.
;; float32/int32 and (at the end) float16; the float16 bodies repeat the same conversion blocks
;; inline on purpose (no call per 4 lanes).
;; Arguments are byte offsets into the imported shared memory. SIMD main loop (8 elements per
;; iteration), scalar tail. After editing, run `npm run build:wasm` (scripts/build-wasm.mjs, wabt) to
;; regenerate reduce-wasm-bytes.ts; a test fails until you do. Shared memory so views never detach on grow.
(module
  (import "env" "mem" (memory 1 65536 shared))
  ;; c += a·b for n×n f32 row-major matrices at byte offsets a, b, c; n a multiple of 4 (the caller checks).
  ;; i-k-j order: a[i][k] splat across 4 lanes times row k of b, added into row i of c, 4 columns per step.
  (func (export "matmul_f32") (param $a i32) (param $b i32) (param $c i32) (param $n i32)
    (local $stride i32) (local $i i32) (local $k i32) (local $rowA i32) (local $rowC i32)
    (local $pb i32) (local $pc i32) (local $end i32) (local $aik v128)
    (local.set $stride (i32.shl (local.get $n) (i32.const 2)))
    (block $idone (loop $iloop
      (br_if $idone (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $rowA (i32.add (local.get $a) (i32.mul (local.get $i) (local.get $stride))))
      (local.set $rowC (i32.add (local.get $c) (i32.mul (local.get $i) (local.get $stride))))
      (local.set $end (i32.add (local.get $rowC) (local.get $stride)))
      (local.set $k (i32.const 0))
      (block $kdone (loop $kloop
        (br_if $kdone (i32.ge_u (local.get $k) (local.get $n)))
        (local.set $aik (f32x4.splat (f32.load (i32.add (local.get $rowA) (i32.shl (local.get $k) (i32.const 2))))))
        (local.set $pb (i32.add (local.get $b) (i32.mul (local.get $k) (local.get $stride))))
        (local.set $pc (local.get $rowC))
        (block $jdone (loop $jloop
          (br_if $jdone (i32.ge_u (local.get $pc) (local.get $end)))
          (v128.store (local.get $pc)
            (f32x4.add (v128.load (local.get $pc)) (f32x4.mul (local.get $aik) (v128.load (local.get $pb)))))
          (local.set $pc (i32.add (local.get $pc) (i32.const 16)))
          (local.set $pb (i32.add (local.get $pb) (i32.const 16)))
          (br $jloop)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $kloop)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $iloop))))
  (func (export "sum_f32") (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $vend i32) (local $a i32) (local $b i32)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $vend (i32.add (local.get $d) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $vdone (loop $v
      (br_if $vdone (i32.ge_u (local.get $d) (local.get $vend)))
      (v128.store (local.get $d) (f32x4.add (v128.load (local.get $d)) (v128.load (local.get $s))))
      (v128.store offset=16 (local.get $d) (f32x4.add (v128.load offset=16 (local.get $d)) (v128.load offset=16 (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 32)))
      (local.set $s (i32.add (local.get $s) (i32.const 32)))
      (br $v)))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
      (f32.store (local.get $d) (f32.add (f32.load (local.get $d)) (f32.load (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 4)))
      (local.set $s (i32.add (local.get $s) (i32.const 4)))
      (br $l))))
  (func (export "max_f32") (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $vend i32) (local $a i32) (local $b i32)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $vend (i32.add (local.get $d) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $vdone (loop $v
      (br_if $vdone (i32.ge_u (local.get $d) (local.get $vend)))
      (v128.store (local.get $d) (f32x4.max (v128.load (local.get $d)) (v128.load (local.get $s))))
      (v128.store offset=16 (local.get $d) (f32x4.max (v128.load offset=16 (local.get $d)) (v128.load offset=16 (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 32)))
      (local.set $s (i32.add (local.get $s) (i32.const 32)))
      (br $v)))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
      (f32.store (local.get $d) (f32.max (f32.load (local.get $d)) (f32.load (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 4)))
      (local.set $s (i32.add (local.get $s) (i32.const 4)))
      (br $l))))
  (func (export "min_f32") (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $vend i32) (local $a i32) (local $b i32)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $vend (i32.add (local.get $d) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $vdone (loop $v
      (br_if $vdone (i32.ge_u (local.get $d) (local.get $vend)))
      (v128.store (local.get $d) (f32x4.min (v128.load (local.get $d)) (v128.load (local.get $s))))
      (v128.store offset=16 (local.get $d) (f32x4.min (v128.load offset=16 (local.get $d)) (v128.load offset=16 (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 32)))
      (local.set $s (i32.add (local.get $s) (i32.const 32)))
      (br $v)))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
      (f32.store (local.get $d) (f32.min (f32.load (local.get $d)) (f32.load (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 4)))
      (local.set $s (i32.add (local.get $s) (i32.const 4)))
      (br $l))))
  (func (export "sum_i32") (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $vend i32) (local $a i32) (local $b i32)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $vend (i32.add (local.get $d) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $vdone (loop $v
      (br_if $vdone (i32.ge_u (local.get $d) (local.get $vend)))
      (v128.store (local.get $d) (i32x4.add (v128.load (local.get $d)) (v128.load (local.get $s))))
      (v128.store offset=16 (local.get $d) (i32x4.add (v128.load offset=16 (local.get $d)) (v128.load offset=16 (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 32)))
      (local.set $s (i32.add (local.get $s) (i32.const 32)))
      (br $v)))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
      (i32.store (local.get $d) (i32.add (i32.load (local.get $d)) (i32.load (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 4)))
      (local.set $s (i32.add (local.get $s) (i32.const 4)))
      (br $l))))
  (func (export "max_i32") (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $vend i32) (local $a i32) (local $b i32)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $vend (i32.add (local.get $d) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $vdone (loop $v
      (br_if $vdone (i32.ge_u (local.get $d) (local.get $vend)))
      (v128.store (local.get $d) (i32x4.max_s (v128.load (local.get $d)) (v128.load (local.get $s))))
      (v128.store offset=16 (local.get $d) (i32x4.max_s (v128.load offset=16 (local.get $d)) (v128.load offset=16 (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 32)))
      (local.set $s (i32.add (local.get $s) (i32.const 32)))
      (br $v)))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
      (i32.store (local.get $d) (select (local.tee $a (i32.load (local.get $d))) (local.tee $b (i32.load (local.get $s))) (i32.gt_s (local.get $a) (local.get $b))))
      (local.set $d (i32.add (local.get $d) (i32.const 4)))
      (local.set $s (i32.add (local.get $s) (i32.const 4)))
      (br $l))))
  (func (export "min_i32") (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $vend i32) (local $a i32) (local $b i32)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $vend (i32.add (local.get $d) (i32.shl (i32.and (local.get $n) (i32.const -8)) (i32.const 2))))
    (block $vdone (loop $v
      (br_if $vdone (i32.ge_u (local.get $d) (local.get $vend)))
      (v128.store (local.get $d) (i32x4.min_s (v128.load (local.get $d)) (v128.load (local.get $s))))
      (v128.store offset=16 (local.get $d) (i32x4.min_s (v128.load offset=16 (local.get $d)) (v128.load offset=16 (local.get $s))))
      (local.set $d (i32.add (local.get $d) (i32.const 32)))
      (local.set $s (i32.add (local.get $s) (i32.const 32)))
      (br $v)))
    (block $done (loop $l
      (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
      (i32.store (local.get $d) (select (local.tee $a (i32.load (local.get $d))) (local.tee $b (i32.load (local.get $s))) (i32.lt_s (local.get $a) (local.get $b))))
      (local.set $d (i32.add (local.get $d) (i32.const 4)))
      (local.set $s (i32.add (local.get $s) (i32.const 4)))
      (br $l))))
  ;; float16 (IEEE binary16 bits): 8 elements per iteration, count must be a multiple of 8 (the JS
  ;; kernel does the tail). Sum: widen to f32 (exact), add in f32, round once to half — the same bits
  ;; as the JS kernel (float16.ts), NaN results canonical 0x7e00.
  (func (export "sum_f16") (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $a v128) (local $b v128) (local $em v128) (local $u v128)
    (local $x v128) (local $y v128) (local $lo v128) (local $hi v128)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 1))))
    (block $done (loop $v
      (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
      (local.set $a (v128.load (local.get $d)))
      (local.set $b (v128.load (local.get $s)))
      ;; low four lanes
      (local.set $lo (i32x4.extend_low_i16x8_u (local.get $a)))
      ;; half bits -> f32, exact: normals rebias the exponent (+112), subnormals convert their
      ;; mantissa to float and scale by 2^-24 (no subnormal float operand: those are slow on x86),
      ;; exponent 31 (inf/NaN) becomes f32 exponent 255; then the sign.
      (local.set $em (v128.and (local.get $lo) (v128.const i32x4 0x7fff 0x7fff 0x7fff 0x7fff)))
      (local.set $x (v128.or
        (v128.bitselect
          (v128.or (i32x4.shl (local.get $em) (i32.const 13)) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000))
          (v128.bitselect
            (f32x4.mul (f32x4.convert_i32x4_s (local.get $em)) (v128.const i32x4 0x33800000 0x33800000 0x33800000 0x33800000))
            (i32x4.add (i32x4.shl (local.get $em) (i32.const 13)) (v128.const i32x4 0x38000000 0x38000000 0x38000000 0x38000000))
            (i32x4.lt_s (local.get $em) (v128.const i32x4 0x400 0x400 0x400 0x400)))
          (i32x4.ge_s (local.get $em) (v128.const i32x4 0x7c00 0x7c00 0x7c00 0x7c00)))
        (i32x4.shl (v128.and (local.get $lo) (v128.const i32x4 0x8000 0x8000 0x8000 0x8000)) (i32.const 16))))
      (local.set $lo (i32x4.extend_low_i16x8_u (local.get $b)))
      ;; half bits -> f32, exact: normals rebias the exponent (+112), subnormals convert their
      ;; mantissa to float and scale by 2^-24 (no subnormal float operand: those are slow on x86),
      ;; exponent 31 (inf/NaN) becomes f32 exponent 255; then the sign.
      (local.set $em (v128.and (local.get $lo) (v128.const i32x4 0x7fff 0x7fff 0x7fff 0x7fff)))
      (local.set $y (v128.or
        (v128.bitselect
          (v128.or (i32x4.shl (local.get $em) (i32.const 13)) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000))
          (v128.bitselect
            (f32x4.mul (f32x4.convert_i32x4_s (local.get $em)) (v128.const i32x4 0x33800000 0x33800000 0x33800000 0x33800000))
            (i32x4.add (i32x4.shl (local.get $em) (i32.const 13)) (v128.const i32x4 0x38000000 0x38000000 0x38000000 0x38000000))
            (i32x4.lt_s (local.get $em) (v128.const i32x4 0x400 0x400 0x400 0x400)))
          (i32x4.ge_s (local.get $em) (v128.const i32x4 0x7c00 0x7c00 0x7c00 0x7c00)))
        (i32x4.shl (v128.and (local.get $lo) (v128.const i32x4 0x8000 0x8000 0x8000 0x8000)) (i32.const 16))))
      (local.set $x (f32x4.add (local.get $x) (local.get $y)))
      ;; f32 -> half bits, round half to even (F. Giesen's float_to_half_fast3_rtne, branch-free):
      ;; |x| >= 65536 (or inf/NaN): inf, NaN -> 0x7e00; |x| < 2^-14: add 0.5 so the FPU rounds to a
      ;; multiple of 2^-24; else rebias the exponent and round on bit 13 (odd mantissa breaks ties up).
      (local.set $u (v128.and (local.get $x) (v128.const i32x4 0x7fffffff 0x7fffffff 0x7fffffff 0x7fffffff)))
      (local.set $lo
        (v128.bitselect
          (v128.bitselect
            (v128.const i32x4 0x7e00 0x7e00 0x7e00 0x7e00)
            (v128.or (v128.const i32x4 0x7c00 0x7c00 0x7c00 0x7c00) (i32x4.shr_u (v128.and (local.get $x) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000)) (i32.const 16)))
            (i32x4.gt_s (local.get $u) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000)))
          (v128.or
            (v128.bitselect
              (i32x4.sub (f32x4.add (local.get $u) (v128.const i32x4 0x3f000000 0x3f000000 0x3f000000 0x3f000000)) (v128.const i32x4 0x3f000000 0x3f000000 0x3f000000 0x3f000000))
              (i32x4.shr_u
                (i32x4.add
                  (i32x4.add (local.get $u) (v128.const i32x4 0xc8000fff 0xc8000fff 0xc8000fff 0xc8000fff))
                  (v128.and (i32x4.shr_u (local.get $u) (i32.const 13)) (v128.const i32x4 1 1 1 1)))
                (i32.const 13))
              (i32x4.lt_s (local.get $u) (v128.const i32x4 0x38800000 0x38800000 0x38800000 0x38800000)))
            (i32x4.shr_u (v128.and (local.get $x) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000)) (i32.const 16)))
          (i32x4.ge_s (local.get $u) (v128.const i32x4 0x47800000 0x47800000 0x47800000 0x47800000))))
      ;; high four lanes
      (local.set $hi (i32x4.extend_high_i16x8_u (local.get $a)))
      ;; half bits -> f32, exact: normals rebias the exponent (+112), subnormals convert their
      ;; mantissa to float and scale by 2^-24 (no subnormal float operand: those are slow on x86),
      ;; exponent 31 (inf/NaN) becomes f32 exponent 255; then the sign.
      (local.set $em (v128.and (local.get $hi) (v128.const i32x4 0x7fff 0x7fff 0x7fff 0x7fff)))
      (local.set $x (v128.or
        (v128.bitselect
          (v128.or (i32x4.shl (local.get $em) (i32.const 13)) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000))
          (v128.bitselect
            (f32x4.mul (f32x4.convert_i32x4_s (local.get $em)) (v128.const i32x4 0x33800000 0x33800000 0x33800000 0x33800000))
            (i32x4.add (i32x4.shl (local.get $em) (i32.const 13)) (v128.const i32x4 0x38000000 0x38000000 0x38000000 0x38000000))
            (i32x4.lt_s (local.get $em) (v128.const i32x4 0x400 0x400 0x400 0x400)))
          (i32x4.ge_s (local.get $em) (v128.const i32x4 0x7c00 0x7c00 0x7c00 0x7c00)))
        (i32x4.shl (v128.and (local.get $hi) (v128.const i32x4 0x8000 0x8000 0x8000 0x8000)) (i32.const 16))))
      (local.set $hi (i32x4.extend_high_i16x8_u (local.get $b)))
      ;; half bits -> f32, exact: normals rebias the exponent (+112), subnormals convert their
      ;; mantissa to float and scale by 2^-24 (no subnormal float operand: those are slow on x86),
      ;; exponent 31 (inf/NaN) becomes f32 exponent 255; then the sign.
      (local.set $em (v128.and (local.get $hi) (v128.const i32x4 0x7fff 0x7fff 0x7fff 0x7fff)))
      (local.set $y (v128.or
        (v128.bitselect
          (v128.or (i32x4.shl (local.get $em) (i32.const 13)) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000))
          (v128.bitselect
            (f32x4.mul (f32x4.convert_i32x4_s (local.get $em)) (v128.const i32x4 0x33800000 0x33800000 0x33800000 0x33800000))
            (i32x4.add (i32x4.shl (local.get $em) (i32.const 13)) (v128.const i32x4 0x38000000 0x38000000 0x38000000 0x38000000))
            (i32x4.lt_s (local.get $em) (v128.const i32x4 0x400 0x400 0x400 0x400)))
          (i32x4.ge_s (local.get $em) (v128.const i32x4 0x7c00 0x7c00 0x7c00 0x7c00)))
        (i32x4.shl (v128.and (local.get $hi) (v128.const i32x4 0x8000 0x8000 0x8000 0x8000)) (i32.const 16))))
      (local.set $x (f32x4.add (local.get $x) (local.get $y)))
      ;; f32 -> half bits, round half to even (F. Giesen's float_to_half_fast3_rtne, branch-free):
      ;; |x| >= 65536 (or inf/NaN): inf, NaN -> 0x7e00; |x| < 2^-14: add 0.5 so the FPU rounds to a
      ;; multiple of 2^-24; else rebias the exponent and round on bit 13 (odd mantissa breaks ties up).
      (local.set $u (v128.and (local.get $x) (v128.const i32x4 0x7fffffff 0x7fffffff 0x7fffffff 0x7fffffff)))
      (local.set $hi
        (v128.bitselect
          (v128.bitselect
            (v128.const i32x4 0x7e00 0x7e00 0x7e00 0x7e00)
            (v128.or (v128.const i32x4 0x7c00 0x7c00 0x7c00 0x7c00) (i32x4.shr_u (v128.and (local.get $x) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000)) (i32.const 16)))
            (i32x4.gt_s (local.get $u) (v128.const i32x4 0x7f800000 0x7f800000 0x7f800000 0x7f800000)))
          (v128.or
            (v128.bitselect
              (i32x4.sub (f32x4.add (local.get $u) (v128.const i32x4 0x3f000000 0x3f000000 0x3f000000 0x3f000000)) (v128.const i32x4 0x3f000000 0x3f000000 0x3f000000 0x3f000000))
              (i32x4.shr_u
                (i32x4.add
                  (i32x4.add (local.get $u) (v128.const i32x4 0xc8000fff 0xc8000fff 0xc8000fff 0xc8000fff))
                  (v128.and (i32x4.shr_u (local.get $u) (i32.const 13)) (v128.const i32x4 1 1 1 1)))
                (i32.const 13))
              (i32x4.lt_s (local.get $u) (v128.const i32x4 0x38800000 0x38800000 0x38800000 0x38800000)))
            (i32x4.shr_u (v128.and (local.get $x) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000)) (i32.const 16)))
          (i32x4.ge_s (local.get $u) (v128.const i32x4 0x47800000 0x47800000 0x47800000 0x47800000))))
      (v128.store (local.get $d) (i16x8.narrow_i32x4_u (local.get $lo) (local.get $hi)))
      (local.set $d (i32.add (local.get $d) (i32.const 16)))
      (local.set $s (i32.add (local.get $s) (i32.const 16)))
      (br $v))))
  ;; float16 max: on order-preserving integer keys (key = bits ^ (sign ? 0xffff : 0x8000), so
  ;; -0 < +0 like Math.max); a NaN operand gives 0x7e00. Count a multiple of 8, as sum_f16.
  (func (export "max_f16") (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $a v128) (local $b v128)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 1))))
    (block $done (loop $v
      (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
      (local.set $a (v128.load (local.get $d)))
      (local.set $b (v128.load (local.get $s)))
      (v128.store (local.get $d)
        (v128.bitselect
          (v128.const i16x8 0x7e00 0x7e00 0x7e00 0x7e00 0x7e00 0x7e00 0x7e00 0x7e00)
          (v128.bitselect
            (local.get $b)
            (local.get $a)
            (i16x8.gt_u
              (v128.xor (local.get $b) (v128.or (i16x8.shr_s (local.get $b) (i32.const 15)) (v128.const i16x8 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000)))
              (v128.xor (local.get $a) (v128.or (i16x8.shr_s (local.get $a) (i32.const 15)) (v128.const i16x8 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000)))))
          (v128.or
            (i16x8.gt_u (v128.and (local.get $a) (v128.const i16x8 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff)) (v128.const i16x8 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00))
            (i16x8.gt_u (v128.and (local.get $b) (v128.const i16x8 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff)) (v128.const i16x8 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00)))))
      (local.set $d (i32.add (local.get $d) (i32.const 16)))
      (local.set $s (i32.add (local.get $s) (i32.const 16)))
      (br $v))))
  ;; float16 min: on order-preserving integer keys (key = bits ^ (sign ? 0xffff : 0x8000), so
  ;; -0 < +0 like Math.min); a NaN operand gives 0x7e00. Count a multiple of 8, as sum_f16.
  (func (export "min_f16") (param $d i32) (param $s i32) (param $n i32)
    (local $end i32) (local $a v128) (local $b v128)
    (local.set $end (i32.add (local.get $d) (i32.shl (local.get $n) (i32.const 1))))
    (block $done (loop $v
      (br_if $done (i32.ge_u (local.get $d) (local.get $end)))
      (local.set $a (v128.load (local.get $d)))
      (local.set $b (v128.load (local.get $s)))
      (v128.store (local.get $d)
        (v128.bitselect
          (v128.const i16x8 0x7e00 0x7e00 0x7e00 0x7e00 0x7e00 0x7e00 0x7e00 0x7e00)
          (v128.bitselect
            (local.get $b)
            (local.get $a)
            (i16x8.lt_u
              (v128.xor (local.get $b) (v128.or (i16x8.shr_s (local.get $b) (i32.const 15)) (v128.const i16x8 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000)))
              (v128.xor (local.get $a) (v128.or (i16x8.shr_s (local.get $a) (i32.const 15)) (v128.const i16x8 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000 0x8000)))))
          (v128.or
            (i16x8.gt_u (v128.and (local.get $a) (v128.const i16x8 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff)) (v128.const i16x8 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00))
            (i16x8.gt_u (v128.and (local.get $b) (v128.const i16x8 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff 0x7fff)) (v128.const i16x8 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00 0x7c00)))))
      (local.set $d (i32.add (local.get $d) (i32.const 16)))
      (local.set $s (i32.add (local.get $s) (i32.const 16)))
      (br $v))))
)
