#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The normal distribution's functions the experiment statistics need (scipy's `norm.cdf`,
/// `norm.sf`, `norm.pdf`, `norm.ppf`), in closed forms over the C library's `erfc`, so that
/// every figure is cheap enough to compute on each look at an experiment.
package enum NormalDistribution {
    /// The standard normal density at `x`.
    package static func density(_ x: Double) -> Double {
        exp(-0.5 * x * x) / (2 * Double.pi).squareRoot()
    }

    /// The standard normal distribution function Φ(x), accurate in both tails (through `erfc`,
    /// not `1 - erf`).
    package static func cdf(_ x: Double) -> Double {
        0.5 * erfc(-x / 2.0.squareRoot())
    }

    /// The survival function 1 − Φ(x), accurate far in the upper tail.
    package static func survival(_ x: Double) -> Double {
        0.5 * erfc(x / 2.0.squareRoot())
    }

    /// The quantile function Φ⁻¹(p): the `x` with Φ(x) = p; −∞ at 0, +∞ at 1, NaN outside [0, 1].
    ///
    /// Acklam's rational approximation (relative error below 1.2e-9), then one Halley step on
    /// Φ through `erfc`, which brings it to about 1e-15.
    package static func quantile(_ p: Double) -> Double {
        guard p >= 0, p <= 1 else { return .nan }
        if p == 0 { return -.infinity }
        if p == 1 { return .infinity }
        let a = [
            -39.696_830_286_653_76, 220.946_098_424_520_5, -275.928_510_446_968_7, 138.357_751_867_269,
            -30.664_798_066_147_16, 2.506_628_277_459_239,
        ]
        let b = [
            -54.476_098_798_224_06, 161.585_836_858_040_9, -155.698_979_859_886_6, 66.801_311_887_719_72,
            -13.280_681_552_885_72,
        ]
        let c = [
            -0.007_784_894_002_430_293, -0.322_396_458_041_136_5, -2.400_758_277_161_838, -2.549_732_539_343_734,
            4.374_664_141_464_968, 2.938_163_982_698_783,
        ]
        let d = [0.007_784_695_709_041_462, 0.322_467_129_070_039_8, 2.445_134_137_142_996, 3.754_408_661_907_416]
        let low = 0.024_25
        var x: Double
        if p < low {
            let q = (-2 * log(p)).squareRoot()
            x =
                (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        } else if p <= 1 - low {
            let q = p - 0.5
            let r = q * q
            x =
                (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q
                / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
        } else {
            let q = (-2 * log1p(-p)).squareRoot()
            x =
                -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5])
                / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        // One Halley step; the error of Φ is taken from the nearer tail.
        let error = x < 0 ? cdf(x) - p : (1 - p) - survival(x)
        let u = error * (2 * Double.pi).squareRoot() * exp(0.5 * x * x)
        x -= u / (1 + 0.5 * x * u)
        return x
    }

    /// E[max(X, 0)] for X ~ N(mean, sd²): μΦ(μ/σ) + σφ(μ/σ), never negative (0 for σ = 0 and μ ≤ 0).
    ///
    /// It equals gbstats' `P(X > 0) · E[X | X > 0]` (its truncated normal mean), without the
    /// 0 · ∞ of the truncated mean far in a tail.
    package static func expectedPositivePart(mean: Double, standardDeviation: Double) -> Double {
        guard standardDeviation > 0 else { return max(mean, 0) }
        let t = mean / standardDeviation
        return max(0, mean * cdf(t) + standardDeviation * density(t))
    }
}
