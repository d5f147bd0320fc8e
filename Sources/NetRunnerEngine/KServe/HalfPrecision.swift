/// IEEE half precision (FP16) and bfloat16 as bit patterns, both ways, without `Float16`
/// (unavailable on some platforms Swift targets): KServe's `FP16` and `BF16` tensors.
enum HalfPrecision {
    /// The FP16 nearest `value` (ties to even), or `nil` when it is not finite there (beyond 65504).
    static func float16(_ value: Float) -> UInt16? {
        guard value.isFinite else { return nil }
        let bits = value.bitPattern
        let sign = UInt16((bits >> 16) & 0x8000)
        let exponent = Int((bits >> 23) & 0xFF)
        let mantissa = bits & 0x7F_FFFF
        let halfExponent = exponent - 127 + 15
        if halfExponent >= 31 { return nil }
        if halfExponent <= 0 {
            // A subnormal half (or zero): value = m * 2^-24.
            guard halfExponent >= -10 else { return sign }
            let significand = mantissa | 0x80_0000
            let shift = UInt32(14 - halfExponent)
            var half = significand >> shift
            let remainder = significand & ((1 << shift) - 1)
            let midpoint: UInt32 = 1 << (shift - 1)
            if remainder > midpoint || (remainder == midpoint && half & 1 == 1) { half += 1 }
            return sign | UInt16(half)
        }
        var half = UInt32(halfExponent) << 10 | mantissa >> 13
        let remainder = mantissa & 0x1FFF
        if remainder > 0x1000 || (remainder == 0x1000 && half & 1 == 1) { half += 1 }
        guard half < 0x7C00 else { return nil }
        return sign | UInt16(half)
    }

    /// The value of an FP16 bit pattern.
    static func float(fromFloat16 half: UInt16) -> Float {
        let negative = half & 0x8000 != 0
        let exponent = Int((half >> 10) & 0x1F)
        let mantissa = Float(half & 0x3FF)
        let magnitude: Float
        switch exponent {
        case 0: magnitude = mantissa * 0x1p-24
        case 31: magnitude = mantissa == 0 ? .infinity : .nan
        default: magnitude = (1 + mantissa / 1024) * Float(sign: .plus, exponent: exponent - 15, significand: 1)
        }
        return negative ? -magnitude : magnitude
    }

    /// The bfloat16 nearest `value` (ties to even), or `nil` when it is not finite there.
    static func bFloat16(_ value: Float) -> UInt16? {
        guard value.isFinite else { return nil }
        let bits = value.bitPattern
        let rounded = bits &+ 0x7FFF &+ ((bits >> 16) & 1)
        let half = UInt16(rounded >> 16)
        guard half & 0x7F80 != 0x7F80 else { return nil }
        return half
    }

    /// The value of a bfloat16 bit pattern.
    static func float(fromBFloat16 half: UInt16) -> Float {
        Float(bitPattern: UInt32(half) << 16)
    }
}
