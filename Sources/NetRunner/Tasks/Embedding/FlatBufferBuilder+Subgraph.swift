import NetRunnerFlatBuffers

extension FlatBufferBuilder {
    /// A TFLite `SubGraph` table made over one of the model this builder extends.
    ///
    /// New tensor, operator and output lists; the old subgraph's inputs and name pointed to
    /// where they are in the tail (``FlatBufferBuilder/init(tail:)``). What imprinting and the
    /// penultimate-layer cut both write.
    ///
    /// - Parameters:
    ///   - old: The model's subgraph, in the tail.
    ///   - tensors: The tensors, in order.
    ///   - operators: The operators, in order of execution.
    ///   - outputs: The indices of the output tensors.
    /// - Returns: The new table.
    mutating func subgraph(
        over old: FlatBuffer.Table, tensors: [Offset], operators: [Offset], outputs: [Int32]
    ) -> Offset {
        let tensorList = vector(offsets: tensors)
        let operatorList = vector(offsets: operators)
        let outputList = vector(outputs)
        startTable()
        add(offset: tensorList, field: 0)
        if let inputs = old.referencePosition(1) { add(offset: reference(toTailPosition: inputs), field: 1) }
        add(offset: outputList, field: 2)
        add(offset: operatorList, field: 3)
        if let name = old.referencePosition(4) { add(offset: reference(toTailPosition: name), field: 4) }
        return endTable()
    }
}
