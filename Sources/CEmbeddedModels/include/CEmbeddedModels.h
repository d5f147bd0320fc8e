// CEmbeddedModels: the default models and labels, linked into the netrunner executable so
// that it runs with no files beside it. The bytes come from Models/ at build time.
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

/// The default detector (Models/face_detection_short_range.tflite); sets `size`.
const unsigned char *nr_embedded_detector(size_t *size);

#ifdef __cplusplus
}
#endif

#endif  // NETRUNNER_CEMBEDDEDMODELS_H
