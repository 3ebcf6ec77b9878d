import Testing
@testable import NotesKit

/// Column batches as the Arrow layout wants them: values, bit-packed booleans, offsets, validity.
@Suite("Column batches")
struct ColumnBatchTests {
    func ints(_ column: FinishedColumn) -> [Int64] {
        (0..<column.length).map { column.buffers[1]!.load(fromByteOffset: 8 * $0, as: Int64.self) }
    }

    func bits(_ pointer: UnsafeMutableRawPointer?, _ n: Int) -> [Bool] {
        (0..<n).map { pointer!.load(fromByteOffset: $0 / 8, as: UInt8.self) & UInt8(1 << ($0 % 8)) != 0 }
    }

    func strings(_ column: FinishedColumn) -> [String] {
        (0..<column.length).map { i in
            let start = Int(column.buffers[1]!.load(fromByteOffset: 4 * i, as: Int32.self))
            let end = Int(column.buffers[1]!.load(fromByteOffset: 4 * (i + 1), as: Int32.self))
            return String(decoding: UnsafeRawBufferPointer(start: column.buffers[2]! + start, count: end - start), as: UTF8.self)
        }
    }

    func batch() -> ColumnBatch {
        let batch = ColumnBatch([Column("id", .int64), Column("flag", .bool), Column("text", .string),
                                 Column("spans", .int32List), Column("maybe", .int64, nullable: true)])
        for i in 0..<10 {
            let c = batch.columns
            c[0].append(Int64(i)); c[1].append(i % 3 == 0); c[2].append(String(repeating: "字", count: i))
            c[3].append(pairs: (0..<(i % 3)).map { $0..<($0 + i) })
            if i % 4 == 0 { c[4].appendNull() } else { c[4].append(Int64(i * 10)) }
            batch.endRow()
        }
        return batch
    }

    @Test("a batch finishes into Arrow buffers: int64 values, bit-packed bools, string offsets, list offsets, validity")
    func layout() throws {
        let (rows, columns) = try batch().finish()
        defer { columns.forEach { $0.free() } }
        #expect(rows == 10 && columns.map(\.format) == ["l", "b", "u", "+l", "l"])
        #expect(ints(columns[0]) == Array(0..<10))
        #expect(bits(columns[1].buffers[1], 10) == (0..<10).map { $0 % 3 == 0 })
        #expect(strings(columns[2]) == (0..<10).map { String(repeating: "字", count: $0) })
        #expect(columns[3].child[0].length == 2 * (0..<10).reduce(0) { $0 + $1 % 3 })
        #expect(columns[4].nullCount == 3 && columns[4].nullable && !columns[0].nullable)
        #expect(bits(columns[4].buffers[0], 10) == (0..<10).map { $0 % 4 != 0 })
    }

    @Test("reversing a batch reverses every column, nulls and lists included")
    func reverse() throws {
        let reversed = batch()
        reversed.reverse()
        let (_, columns) = try reversed.finish()
        defer { columns.forEach { $0.free() } }
        #expect(ints(columns[0]) == Array((0..<10).reversed()))
        #expect(bits(columns[1].buffers[1], 10) == (0..<10).reversed().map { $0 % 3 == 0 })
        #expect(strings(columns[2]) == (0..<10).reversed().map { String(repeating: "字", count: $0) })
        #expect(bits(columns[4].buffers[0], 10) == (0..<10).reversed().map { $0 % 4 != 0 })
        let offsets = (0...10).map { Int(columns[3].buffers[1]!.load(fromByteOffset: 4 * $0, as: Int32.self)) }
        #expect(zip(offsets, offsets.dropFirst()).map { ($1 - $0) / 2 } == (0..<10).reversed().map { $0 % 3 })
        let firstItem = columns[3].child[0].buffers[1]!.load(fromByteOffset: 4, as: Int32.self)  // row 8 (row 9 has none): 0..<8
        #expect(firstItem == 8)
    }
}
