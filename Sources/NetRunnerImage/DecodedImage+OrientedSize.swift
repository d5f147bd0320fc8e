extension DecodedImage {
    /// The original image's size as it is displayed: the header's size, with width and
    /// height swapped when the pixels were turned upright by a 90-degree EXIF orientation.
    public var orientedSize: PixelSize {
        let swapped = PixelSize(width: storedSize.height, height: storedSize.width)
        guard orientation.swapsDimensions else { return storedSize }
        if !isUpright { return swapped }
        // The decoder turns the pixels upright unless told not to: tell by their aspect.
        let pixelsAreUpright = (fullSize.width >= fullSize.height) == (swapped.width >= swapped.height)
        return pixelsAreUpright || storedSize.width == storedSize.height ? swapped : storedSize
    }
}
