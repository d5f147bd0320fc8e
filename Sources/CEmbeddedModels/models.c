#include "CEmbeddedModels.h"

extern const unsigned char nr_classifier_start[], nr_classifier_end[];
extern const unsigned char nr_classifier_labels_start[], nr_classifier_labels_end[];
extern const unsigned char nr_detector_start[], nr_detector_end[];
extern const unsigned char nr_classifier_description_start[], nr_classifier_description_end[];
extern const unsigned char nr_detector_description_start[], nr_detector_description_end[];

const unsigned char *nr_embedded_classifier(size_t *size) {
  *size = (size_t)(nr_classifier_end - nr_classifier_start);
  return nr_classifier_start;
}

const unsigned char *nr_embedded_classifier_labels(size_t *size) {
  *size = (size_t)(nr_classifier_labels_end - nr_classifier_labels_start);
  return nr_classifier_labels_start;
}

const unsigned char *nr_embedded_detector(size_t *size) {
  *size = (size_t)(nr_detector_end - nr_detector_start);
  return nr_detector_start;
}

const unsigned char *nr_embedded_classifier_description(size_t *size) {
  *size = (size_t)(nr_classifier_description_end - nr_classifier_description_start);
  return nr_classifier_description_start;
}

const unsigned char *nr_embedded_detector_description(size_t *size) {
  *size = (size_t)(nr_detector_description_end - nr_detector_description_start);
  return nr_detector_description_start;
}
