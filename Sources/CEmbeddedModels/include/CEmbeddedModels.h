// CEmbeddedModels: the default model bundles (model.json, model, labels), linked into the
// netrunner executable so that it runs with no files beside it. The bytes come from
// Models/bundles/ at build time.
#ifndef NETRUNNER_CEMBEDDEDMODELS_H
#define NETRUNNER_CEMBEDDEDMODELS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The default image classifier (Models/mobilenet_v2_1.0_224_uint8.tflite); sets `size`.
const unsigned char *nr_embedded_classifier(size_t *size);

/// Its labels (Models/imagenet_labels.txt); sets `size`.
const unsigned char *nr_embedded_classifier_labels(size_t *size);

/// The default detector (Models/bundles/face_detection_short_range.tiobundle); sets `size`.
const unsigned char *nr_embedded_detector(size_t *size);

/// The classifier bundle's model.json; sets `size`.
const unsigned char *nr_embedded_classifier_description(size_t *size);

/// The detector bundle's model.json; sets `size`.
const unsigned char *nr_embedded_detector_description(size_t *size);

#ifdef __cplusplus
}
#endif

#endif  // NETRUNNER_CEMBEDDEDMODELS_H
