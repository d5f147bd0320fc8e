import ArgumentParser

/// How `classify` and `detect` hand their answers over: `--json` and `--save-input`.
struct AnswerFlags: ParsableArguments {
    @Flag(help: "Print one JSON object per image (JSON Lines).")
    var json = false

    @Option(
        name: .customLong("save-input"),
        help:
            "Write what the model saw for each image (its input tensor as a PNG: crop, resize, normalisation undone) into this folder; runs on one thread."
    )
    var saveInput: String?
}
