import NetRunnerHub

/// The gates' evaluations waiting to run on this node, kept fairly per model (issue 54: one
/// publisher's flood of 280 pushes filled a single queue of 256, and another model's version
/// pushed next failed at once, for good).
///
/// Each model has a queue of its own, at most ``perModel`` long, and all together hold at most
/// ``total``; ``next()`` takes from the model that started an evaluation least recently, so a
/// model's evaluation waits behind at most the ones running when it was queued, however many
/// another model has waiting. An evaluation that finds no room is not refused: the store has it
/// as `pending` already, and the model is marked as having evaluations waiting there; when its
/// queue has room again the runner reads them back, oldest first (``refillable()``,
/// ``beginRefill(_:)``, ``endRefill(_:found:ask:)``).
struct GateQueue {
    /// An evaluation as the store knows it: a version against an alias's gate, queued at a time.
    struct Identity: Hashable {
        var version: Int
        var alias: String
        var queuedAt: String

        init(_ evaluation: HubEvaluation) {
            (version, alias, queuedAt) = (evaluation.version, evaluation.alias, evaluation.queuedAt)
        }
    }

    /// What a refill asks the store for: a model's oldest pending evaluations, at most `limit`.
    struct Ask {
        var limit: Int
        /// ``Model/overflows`` when it was asked: a later overflow keeps the model marked.
        var overflows: Int
    }

    private struct Model {
        var waiting: [HubEvaluation] = []
        var running: Set<Identity> = []
        /// Whether the store has pending evaluations of the model that are in no queue here.
        var inStore = false
        /// Evaluations left in the store so far (a refill that raced one leaves the mark).
        var overflows = 0
        var refilling = false
        /// A refill failed (the store did not answer): none again until ``clearStalls()``.
        var stalled = false
        /// ``GateQueue/starts`` when the model last started one: the least recent goes next.
        var lastStarted = 0

        var isEmpty: Bool { waiting.isEmpty && running.isEmpty && !inStore && !refilling }
    }

    /// The most evaluations of one model waiting here.
    let perModel: Int
    /// The most evaluations waiting here, all models together.
    let total: Int
    private var models: [String: Model] = [:]
    /// Evaluations waiting here (not running).
    private(set) var count = 0
    /// Evaluations running.
    private(set) var runningCount = 0
    private var starts = 0

    init(perModel: Int, total: Int) {
        self.perModel = max(1, perModel)
        self.total = max(1, total)
    }

    /// Whether nothing waits or runs, here or in the store.
    var isIdle: Bool { count == 0 && runningCount == 0 && !models.values.contains { $0.inStore } }

    /// Queues an evaluation (one already waiting for the same version and alias is replaced in
    /// place); `false` when there was no room, and it waits in the store.
    @discardableResult
    mutating func add(_ evaluation: HubEvaluation) -> Bool {
        var model = models[evaluation.name, default: Model()]
        defer { models[evaluation.name] = model }
        if let index = model.waiting.firstIndex(where: {
            $0.version == evaluation.version && $0.alias == evaluation.alias
        }) {
            model.waiting[index] = evaluation
            return true
        }
        if model.running.contains(Identity(evaluation)) { return true }
        // Behind those already in the store, in their order: they are read back oldest first.
        guard !model.inStore, model.waiting.count < perModel, count < total else {
            model.inStore = true
            model.overflows += 1
            return false
        }
        model.waiting.append(evaluation)
        count += 1
        return true
    }

    /// The next evaluation to run, marked running: the oldest of the model that started one
    /// least recently.
    mutating func next() -> HubEvaluation? {
        var chosen: (name: String, lastStarted: Int)?
        for (name, model) in models where !model.waiting.isEmpty {
            if let best = chosen, (best.lastStarted, best.name) <= (model.lastStarted, name) { continue }
            chosen = (name, model.lastStarted)
        }
        guard let name = chosen?.name, var model = models[name] else { return nil }
        let evaluation = model.waiting.removeFirst()
        starts += 1
        model.lastStarted = starts
        model.running.insert(Identity(evaluation))
        models[name] = model
        count -= 1
        runningCount += 1
        return evaluation
    }

    /// An evaluation ``next()`` gave has ended.
    mutating func finished(_ evaluation: HubEvaluation) {
        guard var model = models[evaluation.name], model.running.remove(Identity(evaluation)) != nil else { return }
        runningCount -= 1
        models[evaluation.name] = model.isEmpty ? nil : model
    }

    /// The models whose evaluations wait in the store and whose queues have room now.
    func refillable() -> [String] {
        guard count < total else { return [] }
        return models.compactMap { name, model in
            model.inStore && !model.refilling && !model.stalled && model.waiting.count < perModel ? name : nil
        }.sorted()
    }

    /// Starts reading a model's evaluations back from the store: what to ask for, or `nil` when
    /// there is nothing to read or no room (or a refill is under way).
    mutating func beginRefill(_ name: String) -> Ask? {
        guard var model = models[name], model.inStore, !model.refilling, !model.stalled else { return nil }
        let room = min(perModel - model.waiting.count, total - count)
        guard room > 0 else { return nil }
        model.refilling = true
        models[name] = model
        // The store's oldest include those queued or running here: asked for beyond them.
        return Ask(limit: model.waiting.count + model.running.count + room, overflows: model.overflows)
    }

    /// Ends a refill with the store's oldest pending evaluations of the model (`nil`: the store
    /// did not answer; the model stalls until ``clearStalls()``).
    mutating func endRefill(_ name: String, found: [HubEvaluation]?, ask: Ask) {
        guard var model = models[name] else { return }
        model.refilling = false
        guard let found else {
            model.stalled = true
            models[name] = model
            return
        }
        var known = Set(model.waiting.map(Identity.init)).union(model.running)
        var left = false
        for evaluation in found where !known.contains(Identity(evaluation)) {
            known.insert(Identity(evaluation))
            if let index = model.waiting.firstIndex(where: {
                $0.version == evaluation.version && $0.alias == evaluation.alias
            }) {
                // Queued again in the store since (a gate set again): the store's is current.
                model.waiting[index] = evaluation
            } else if model.waiting.count < perModel, count < total {
                model.waiting.append(evaluation)
                count += 1
            } else {
                left = true
            }
        }
        // All read: nothing more waits there, unless another was left there meanwhile.
        if !left, found.count < ask.limit, model.overflows == ask.overflows { model.inStore = false }
        models[name] = model.isEmpty ? nil : model
    }

    /// Lets stalled refills be tried again (the runner's periodic look).
    mutating func clearStalls() {
        for name in models.keys { models[name]?.stalled = false }
    }

    /// Forgets everything waiting (the hub stops; the store keeps them pending).
    mutating func removeAll() {
        models = models.filter { !$0.value.running.isEmpty }.mapValues {
            var model = Model()
            model.running = $0.running
            return model
        }
        count = 0
    }
}
