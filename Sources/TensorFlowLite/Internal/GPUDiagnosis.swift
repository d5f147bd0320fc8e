// Reading why the GPU accelerator could not start from what the runtime wrote while it tried.

/// Turns the runtime's log of a failed GPU compile into the reason a user can act on.
enum GPUDiagnosis {
    /// The reason no GPU is usable, when the log says so.
    ///
    /// - Parameter log: What the runtime wrote while the compile ran.
    /// - Returns: The reason, or `nil` when the failure is the model's (an operator, a shape),
    ///   not the device's.
    static func unavailable(fromLog log: String) -> GPUUnavailable? {
        let install =
            "install your GPU's Vulkan driver (NVIDIA: the driver's Vulkan ICD with libglvnd; AMD and Intel: "
            + "Debian's mesa-vulkan-drivers), or lavapipe from bookworm-backports for a software GPU (docs/gpu.md)"
        if log.contains("Found no drivers") || log.contains("VK_ERROR_INCOMPATIBLE_DRIVER") {
            return GPUUnavailable("the Vulkan loader found no driver; \(install)")
        }
        if log.contains("No adapters found") || log.contains("Failed to initialize WebGPU")
            || log.contains("WebGPU environment")
        {
            return GPUUnavailable(
                "no Vulkan device could run LiteRT's GPU accelerator (Dawn found no adapter with the features it "
                    + "needs; Debian bookworm's own lavapipe is too old); \(install)")
        }
        if log.contains("GPU accelerator") && log.contains("not") {
            return GPUUnavailable("LiteRT could not load its GPU accelerator: \(firstLine(log))")
        }
        return nil
    }

    private static func firstLine(_ log: String) -> String {
        String(log.split(separator: "\n").first ?? "")
    }
}
