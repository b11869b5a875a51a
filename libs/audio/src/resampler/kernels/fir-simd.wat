;; fir-simd.wat: the resampler's FIR inner loops with WebAssembly 128-bit SIMD (f32x4).
;;
;; Why this exists: the plain TypeScript kernels (folded-fir.ts, plain-fir.ts, mirror-fir.ts) run
;; at about 3 cycles per folded tap pair, their scalar limit, and `npm run bench:audio` measured
;; them slower than speexdsp quality 4 (WASM SIMD build) on 20 ms frames:
;;     16k -> 8k  8647 ns/frame vs speex 4587 (0.53x)     24k -> 8k  12178 vs 6668 (0.55x)
;;     8k -> 24k  9110 ns/frame vs speex 8559 (0.94x)
;; Speex wins with 4-wide SIMD; so do we, here: f32x4 products, four outputs sharing every tap
;; load, four accumulators to hide the add latency, and one call per branch for a whole frame
;; (a JS -> WASM call per output would eat the gain).
;;
;; Source of truth: this file. `npm run build:wasm` compiles it with wabt (simd feature) into
;; fir-simd.wasm.ts (base64); a unit test recompiles it and fails if the two differ.
;;
;; Conventions: every pointer is a byte address in the exported memory; samples and taps are f32.
;; A tap row holds `vecs` * 4 taps, zero-padded at the end, so a window reads up to 3 samples past
;; its last real tap: the caller keeps 4 zeroed (finite) floats after its data. Tap rows are
;; 16-byte aligned; windows need not be (unaligned v128.load is fine).
;;
;; Rounding: every output is the same sequence of operations whether it is computed in a block of
;; four or alone: lane i of one accumulator sums taps k = i (mod 4) in order, then the lanes are
;; added as (lane0 + lane2) + (lane1 + lane3). So results never depend on where a block boundary
;; fell, and chunked and one-shot processing stay bit-identical (streaming-resampler.spec.ts).
(module
  (memory (export "memory") 1)

  ;; firStrided(x, step, count, taps, vecs, out, outStep): one polyphase branch over a frame.
  ;;   out[t * outStep] = sum_{k < 4 vecs} taps[k] * x[t * step + k]   for t < count
  ;; (x, out: byte addresses; step, outStep: bytes between consecutive windows / outputs.)
  (func (export "firStrided")
    (param $x i32) (param $step i32) (param $count i32) (param $taps i32) (param $vecs i32)
    (param $out i32) (param $outStep i32)
    (local $tapsEnd i32) (local $p i32) (local $q0 i32) (local $q1 i32) (local $q2 i32) (local $q3 i32)
    (local $c v128) (local $s0 v128) (local $s1 v128) (local $s2 v128) (local $s3 v128)
    (local $u v128) (local $w v128)
    (local.set $tapsEnd (i32.add (local.get $taps) (i32.shl (local.get $vecs) (i32.const 4))))
    ;; Blocks of four outputs: four accumulators hide the add latency, one tap load feeds four.
    (block $singles
      (loop $block
        (br_if $singles (i32.lt_s (local.get $count) (i32.const 4)))
        (local.set $q0 (local.get $x))
        (local.set $q1 (i32.add (local.get $q0) (local.get $step)))
        (local.set $q2 (i32.add (local.get $q1) (local.get $step)))
        (local.set $q3 (i32.add (local.get $q2) (local.get $step)))
        (local.set $s0 (v128.const i64x2 0 0))
        (local.set $s1 (v128.const i64x2 0 0))
        (local.set $s2 (v128.const i64x2 0 0))
        (local.set $s3 (v128.const i64x2 0 0))
        (local.set $p (local.get $taps))
        ;; Two tap vectors per iteration, addressed by offset immediates: half the pointer updates
        ;; (measured 1.6x faster than one per iteration; eight accumulators were slower: spills).
        ;; An odd vector count takes one step first. The order of the sums is unchanged.
        (if (i32.and (local.get $vecs) (i32.const 1))
          (then
            (local.set $c (v128.load (local.get $p)))
            (local.set $s0 (f32x4.add (local.get $s0) (f32x4.mul (local.get $c) (v128.load (local.get $q0)))))
            (local.set $s1 (f32x4.add (local.get $s1) (f32x4.mul (local.get $c) (v128.load (local.get $q1)))))
            (local.set $s2 (f32x4.add (local.get $s2) (f32x4.mul (local.get $c) (v128.load (local.get $q2)))))
            (local.set $s3 (f32x4.add (local.get $s3) (f32x4.mul (local.get $c) (v128.load (local.get $q3)))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (local.set $q0 (i32.add (local.get $q0) (i32.const 16)))
            (local.set $q1 (i32.add (local.get $q1) (i32.const 16)))
            (local.set $q2 (i32.add (local.get $q2) (i32.const 16)))
            (local.set $q3 (i32.add (local.get $q3) (i32.const 16)))))
        (block $tapsDone
          (br_if $tapsDone (i32.ge_u (local.get $p) (local.get $tapsEnd)))
          (loop $tap
            (local.set $c (v128.load (local.get $p)))
            (local.set $s0 (f32x4.add (local.get $s0) (f32x4.mul (local.get $c) (v128.load (local.get $q0)))))
            (local.set $s1 (f32x4.add (local.get $s1) (f32x4.mul (local.get $c) (v128.load (local.get $q1)))))
            (local.set $s2 (f32x4.add (local.get $s2) (f32x4.mul (local.get $c) (v128.load (local.get $q2)))))
            (local.set $s3 (f32x4.add (local.get $s3) (f32x4.mul (local.get $c) (v128.load (local.get $q3)))))
            (local.set $c (v128.load offset=16 (local.get $p)))
            (local.set $s0 (f32x4.add (local.get $s0) (f32x4.mul (local.get $c) (v128.load offset=16 (local.get $q0)))))
            (local.set $s1 (f32x4.add (local.get $s1) (f32x4.mul (local.get $c) (v128.load offset=16 (local.get $q1)))))
            (local.set $s2 (f32x4.add (local.get $s2) (f32x4.mul (local.get $c) (v128.load offset=16 (local.get $q2)))))
            (local.set $s3 (f32x4.add (local.get $s3) (f32x4.mul (local.get $c) (v128.load offset=16 (local.get $q3)))))
            (local.set $p (i32.add (local.get $p) (i32.const 32)))
            (local.set $q0 (i32.add (local.get $q0) (i32.const 32)))
            (local.set $q1 (i32.add (local.get $q1) (i32.const 32)))
            (local.set $q2 (i32.add (local.get $q2) (i32.const 32)))
            (local.set $q3 (i32.add (local.get $q3) (i32.const 32)))
            (br_if $tap (i32.lt_u (local.get $p) (local.get $tapsEnd)))))
        ;; Transpose-and-add (a, b, c, d: the lanes of s0..s3): u = [a0+a2, b0+b2, a1+a3, b1+b3],
        ;; w = [c0+c2, d0+d2, c1+c3, d1+d3]; then lane r of the last sum is output r's
        ;; (lane0 + lane2) + (lane1 + lane3).
        (local.set $u (f32x4.add
          (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $s0) (local.get $s1))
          (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $s0) (local.get $s1))))
        (local.set $w (f32x4.add
          (i8x16.shuffle 0 1 2 3 16 17 18 19 4 5 6 7 20 21 22 23 (local.get $s2) (local.get $s3))
          (i8x16.shuffle 8 9 10 11 24 25 26 27 12 13 14 15 28 29 30 31 (local.get $s2) (local.get $s3))))
        (local.set $u (f32x4.add
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23 (local.get $u) (local.get $w))
          (i8x16.shuffle 8 9 10 11 12 13 14 15 24 25 26 27 28 29 30 31 (local.get $u) (local.get $w))))
        (f32.store (local.get $out) (f32x4.extract_lane 0 (local.get $u)))
        (local.set $out (i32.add (local.get $out) (local.get $outStep)))
        (f32.store (local.get $out) (f32x4.extract_lane 1 (local.get $u)))
        (local.set $out (i32.add (local.get $out) (local.get $outStep)))
        (f32.store (local.get $out) (f32x4.extract_lane 2 (local.get $u)))
        (local.set $out (i32.add (local.get $out) (local.get $outStep)))
        (f32.store (local.get $out) (f32x4.extract_lane 3 (local.get $u)))
        (local.set $out (i32.add (local.get $out) (local.get $outStep)))
        (local.set $x (i32.add (local.get $x) (i32.shl (local.get $step) (i32.const 2))))
        (local.set $count (i32.sub (local.get $count) (i32.const 4)))
        (br $block)))
    ;; The last 0..3 outputs, one at a time, in the same operation order.
    (block $done
      (loop $single
        (br_if $done (i32.le_s (local.get $count) (i32.const 0)))
        (f32.store (local.get $out) (call $dot (local.get $x) (local.get $taps) (local.get $tapsEnd)))
        (local.set $x (i32.add (local.get $x) (local.get $step)))
        (local.set $out (i32.add (local.get $out) (local.get $outStep)))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $single))))

  ;; firPolyphase(x, rows, rowBytes, vecs, count, phase, phaseStep, newestStep, phases, out):
  ;; a whole L/M stage whose branches recur too rarely to block (L > 8), one output at a time.
  ;; Output m reads the window at x and tap row `phase` (rows + phase * rowBytes), writes out[m];
  ;; then the window moves by newestStep bytes and phase by phaseStep, carrying one sample (4 bytes)
  ;; when phase reaches `phases` (L): the integer form of virtual position m * M over L.
  (func (export "firPolyphase")
    (param $x i32) (param $rows i32) (param $rowBytes i32) (param $vecs i32) (param $count i32)
    (param $phase i32) (param $phaseStep i32) (param $newestStep i32) (param $phases i32) (param $out i32)
    (local $p i32)
    (block $done
      (loop $output
        (br_if $done (i32.le_s (local.get $count) (i32.const 0)))
        (local.set $p (i32.add (local.get $rows) (i32.mul (local.get $phase) (local.get $rowBytes))))
        (f32.store (local.get $out)
          (call $dot (local.get $x) (local.get $p) (i32.add (local.get $p) (i32.shl (local.get $vecs) (i32.const 4)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $x (i32.add (local.get $x) (local.get $newestStep)))
        (local.set $phase (i32.add (local.get $phase) (local.get $phaseStep)))
        (if (i32.ge_s (local.get $phase) (local.get $phases))
          (then
            (local.set $phase (i32.sub (local.get $phase) (local.get $phases)))
            (local.set $x (i32.add (local.get $x) (i32.const 4)))))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $output))))

  ;; One output: taps [p, end) against the window at q, summed as described in the header.
  (func $dot (param $q i32) (param $p i32) (param $end i32) (result f32)
    (local $s v128)
    (loop $tap
      (local.set $s (f32x4.add (local.get $s) (f32x4.mul (v128.load (local.get $p)) (v128.load (local.get $q)))))
      (local.set $p (i32.add (local.get $p) (i32.const 16)))
      (local.set $q (i32.add (local.get $q) (i32.const 16)))
      (br_if $tap (i32.lt_u (local.get $p) (local.get $end))))
    (local.set $s (f32x4.add (local.get $s) (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $s) (local.get $s))))
    (f32.add (f32x4.extract_lane 0 (local.get $s)) (f32x4.extract_lane 1 (local.get $s))))

  ;; i16ToF32(src, dst, n): n Int16 samples at src to f32 at dst (exact), eight per step.
  (func (export "i16ToF32") (param $src i32) (param $dst i32) (param $n i32)
    (local $v v128) (local $end i32)
    (local.set $end (i32.add (local.get $src) (i32.shl (local.get $n) (i32.const 1))))
    (block $tail
      (loop $eight
        (br_if $tail (i32.gt_u (i32.add (local.get $src) (i32.const 16)) (local.get $end)))
        (local.set $v (v128.load (local.get $src)))
        (v128.store (local.get $dst) (f32x4.convert_i32x4_s (i32x4.extend_low_i16x8_s (local.get $v))))
        (v128.store offset=16 (local.get $dst) (f32x4.convert_i32x4_s (i32x4.extend_high_i16x8_s (local.get $v))))
        (local.set $src (i32.add (local.get $src) (i32.const 16)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 32)))
        (br $eight)))
    (block $done
      (loop $one
        (br_if $done (i32.ge_u (local.get $src) (local.get $end)))
        (f32.store (local.get $dst) (f32.convert_i32_s (i32.load16_s (local.get $src))))
        (local.set $src (i32.add (local.get $src) (i32.const 2)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 4)))
        (br $one))))

  ;; f32ToI16(src, dst, n): rounds half up (floor(v + 0.5), as Math.round) and saturates to Int16,
  ;; like the TypeScript path's toInt16. Eight per step; the narrowing saturates.
  (func (export "f32ToI16") (param $src i32) (param $dst i32) (param $n i32)
    (local $half v128) (local $end i32)
    (local.set $half (v128.const f32x4 0.5 0.5 0.5 0.5))
    (local.set $end (i32.add (local.get $src) (i32.shl (local.get $n) (i32.const 2))))
    (block $tail
      (loop $eight
        (br_if $tail (i32.gt_u (i32.add (local.get $src) (i32.const 32)) (local.get $end)))
        (v128.store (local.get $dst)
          (i16x8.narrow_i32x4_s
            (i32x4.trunc_sat_f32x4_s (f32x4.floor (f32x4.add (v128.load (local.get $src)) (local.get $half))))
            (i32x4.trunc_sat_f32x4_s (f32x4.floor (f32x4.add (v128.load offset=16 (local.get $src)) (local.get $half))))))
        (local.set $src (i32.add (local.get $src) (i32.const 32)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
        (br $eight)))
    (block $done
      (loop $one
        (br_if $done (i32.ge_u (local.get $src) (local.get $end)))
        (i32.store16 (local.get $dst)
          (i32x4.extract_lane 0
            (i16x8.narrow_i32x4_s
              (i32x4.trunc_sat_f32x4_s (f32x4.floor (f32x4.add (v128.load32_zero (local.get $src)) (local.get $half))))
              (v128.const i64x2 0 0))))
        (local.set $src (i32.add (local.get $src) (i32.const 4)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 2)))
        (br $one)))))
