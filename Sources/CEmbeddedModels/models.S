// The default models, embedded with .incbin from their bundles in Models/bundles/ (found
// through the target's header search path, set in Package.swift).
    .section .rodata.netrunner_models, "a"
    .balign 64
    .global nr_classifier_start
nr_classifier_start:
    .incbin "mobilenet_v2_1.0_224_uint8.tiobundle/mobilenet_v2_1.0_224_uint8.tflite"
    .global nr_classifier_end
nr_classifier_end:
    .balign 64
    .global nr_classifier_labels_start
nr_classifier_labels_start:
    .incbin "mobilenet_v2_1.0_224_uint8.tiobundle/assets/labels.txt"
    .global nr_classifier_labels_end
nr_classifier_labels_end:
    .balign 64
    .global nr_detector_start
nr_detector_start:
    .incbin "face_detection_short_range.tiobundle/face_detection_short_range.tflite"
    .global nr_detector_end
nr_detector_end:
    .balign 64
    .global nr_classifier_description_start
nr_classifier_description_start:
    .incbin "mobilenet_v2_1.0_224_uint8.tiobundle/model.json"
    .global nr_classifier_description_end
nr_classifier_description_end:
    .balign 64
    .global nr_detector_description_start
nr_detector_description_start:
    .incbin "face_detection_short_range.tiobundle/model.json"
    .global nr_detector_description_end
nr_detector_description_end:
    .section .note.GNU-stack, "", @progbits
