// The HEIF shim's decoder and the helpers heif_shim.c and heif_decode.c (the primary image
// converted and transformed as Python's readers do) share with heif_region.c (the grid tiles a
// region covers, decoded alone). Private to CImageCodecs.
#ifndef NETRUNNER_HEIF_SHIM_H
#define NETRUNNER_HEIF_SHIM_H

#include "CImageCodecs.h"
#include "heif_convert.h"
#include "nr_formats.h"

#include <libheif/heif.h>
#include <libheif/heif_properties.h>

struct nr_heif_decoder {
    struct heif_context *context;
    struct heif_image_handle *handle;
    /// libheif's decode, when it is the answer.
    struct heif_image *image;
    /// Ours, when the conversion or the transformations were done here: rows of `width *
    /// channels` bytes.
    uint8_t *pixels;
    int width;
    int height;
    int channels;
    char message[NR_CODEC_MESSAGE_SIZE];
};

/// One transformation of the primary image, in the file's order.
struct nr_heif_step {
    enum heif_item_property_type type;
    heif_property_id property;
    /// The rotation's angle counter-clockwise, or whether a mirror is left to right.
    int value;
};

/// More transformations than a real file has (one of each); past it libheif applies them.
#define NR_HEIF_MAX_STEPS 8

/// 420 or 422 when a grid's coded tiles (`tiling` untransformed) have a side `chroma` halves (an
/// odd width with 4:2:0 or 4:2:2, an odd height with 4:2:0), which libheif 1.19 cannot paste
/// into its grid without writing past the chroma plane; 0 when they fit.
int nr_heif_tiles_misfit_chroma(const struct heif_image_tiling *tiling, enum heif_chroma chroma);

/// Initialises libheif once for the process (`heif_init`, which loads its plugins).
void nr_heif_prepare(void);

/// libheif's error as an NR_CODEC_* status.
int nr_heif_status(struct heif_error error);

/// Keeps libheif's message in the decoder; returns the error as an NR_CODEC_* status.
int nr_heif_fail(struct nr_heif_decoder *decoder, struct heif_error error);

/// A view of one of libheif's 8-bit planes (or its interleaved RGB), valid while the image is.
int nr_plane_view(struct nr_plane *plane, struct heif_image *image, enum heif_channel channel, uint32_t bytes);

/// The primary image's transformations in order; -1 when there are too many or one is invalid.
int nr_heif_steps(const struct nr_heif_decoder *decoder, struct nr_heif_step *steps);

/// Applies the steps from `first` to an interleaved RGB(A) plane.
int nr_heif_apply_rgb(nr_heif_decoder *decoder, const struct nr_heif_step *steps, int first, int count,
    struct nr_plane *rgb);

/// Hands the RGB(A) over as the answer: ours, or libheif's image that it views.
int nr_heif_finish(nr_heif_decoder *decoder, int status, struct nr_plane *rgb, struct heif_image **image);

#endif
