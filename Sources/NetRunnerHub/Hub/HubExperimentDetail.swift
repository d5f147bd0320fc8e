/// An experiment with its figures and its history, as `GET .../experiments/{id}` answers.
public struct HubExperimentDetail: Codable, Equatable, Sendable {
    /// The experiment.
    public var experiment: HubExperiment
    /// Its figures now.
    public var analysis: HubExperimentAnalysis
    /// Who started, stopped, concluded it, and what it did by itself.
    public var history: [HubExperimentChange]

    /// Creates a detail record.
    public init(experiment: HubExperiment, analysis: HubExperimentAnalysis, history: [HubExperimentChange]) {
        self.experiment = experiment
        self.analysis = analysis
        self.history = history
    }
}
