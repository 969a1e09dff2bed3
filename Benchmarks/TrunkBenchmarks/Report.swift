/// The printed result: one row per figure, then notes on what each includes.
struct Report {
    enum Goal {
        /// p50 and p99 at most `factor` times the baseline's.
        case withinBaseline(factor: Double)
        /// p50 under a limit.
        case p50Under(UInt64)
        /// The total (wall time) under a limit.
        case totalUnder(UInt64)
        /// Informational.
        case none
    }

    struct Baseline {
        var name: String
        var samples: Samples
    }

    struct Row {
        var figure: String
        var samples: Samples
        var total: UInt64?
        var baseline: Baseline?
        var goal: Goal

        /// `nil` when the row has no goal.
        var passed: Bool? {
            switch goal {
            case .none: return nil
            case .withinBaseline(let factor):
                guard let baseline, let ratios = ratios(to: baseline.samples) else { return nil }
                return ratios.p50 <= factor && ratios.p99 <= factor
            case .p50Under(let limit): return samples.p50 < limit
            case .totalUnder(let limit): return (total ?? .max) < limit
            }
        }

        func ratios(to baseline: Samples) -> (p50: Double, p99: Double)? {
            guard baseline.p50 > 0, baseline.p99 > 0 else { return nil }
            return (Double(samples.p50) / Double(baseline.p50), Double(samples.p99) / Double(baseline.p99))
        }

        var cells: [String] {
            let baselineCell = baseline.map {
                "\($0.name) \(formatNanos($0.samples.p50)) / \(formatNanos($0.samples.p99))"
            } ?? "—"
            let ratioCell = baseline.flatMap { ratios(to: $0.samples) }.map {
                fmt($0.p50, digits: 2) + "× / " + fmt($0.p99, digits: 2) + "×"
            } ?? "—"
            let goalCell: String
            switch goal {
            case .none: goalCell = "(info)"
            case .withinBaseline(let factor): goalCell = "p50, p99 ≤ \(fmt(factor, digits: 0))× baseline"
            case .p50Under(let limit): goalCell = "p50 < \(formatNanos(limit))"
            case .totalUnder(let limit): goalCell = "wall < \(formatNanos(limit))"
            }
            let result = passed.map { $0 ? "PASS" : "FAIL" } ?? ""
            return [
                figure, String(samples.count), formatNanos(samples.p50), formatNanos(samples.p99),
                total.map(formatNanos) ?? "—", baselineCell, ratioCell, goalCell, result,
            ]
        }
    }

    var rows: [Row] = []
    var notes: [String] = []
    /// Added to the figures (not their indented parts) and notes that follow,
    /// e.g. the CPU placement they were measured under.
    var label: String?

    mutating func add(
        _ figure: String, _ samples: Samples, total: UInt64? = nil, baseline: Baseline? = nil, goal: Goal = .none
    ) {
        let named = figure.hasPrefix(" ") ? figure : figure + (label.map { " [\($0)]" } ?? "")
        rows.append(Row(figure: named, samples: samples, total: total, baseline: baseline, goal: goal))
    }

    mutating func note(_ text: String) { notes.append((label.map { "[\($0)] " } ?? "") + text) }

    var failed: Bool { rows.contains { $0.passed == false } }

    func render() -> String {
        let header = ["figure", "n", "p50", "p99", "wall", "baseline p50 / p99", "ratio p50 / p99", "goal", "result"]
        let table = [header] + rows.map(\.cells)
        var widths = [Int](repeating: 0, count: header.count)
        for line in table {
            for (column, cell) in line.enumerated() { widths[column] = max(widths[column], cell.count) }
        }
        var out = ""
        for (index, line) in table.enumerated() {
            let padded = line.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return column == 1 || column == 2 || column == 3 || column == 4 ? pad + cell : cell + pad
            }
            out += padded.joined(separator: "  ") + "\n"
            if index == 0 {
                out += widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ") + "\n"
            }
        }
        if !notes.isEmpty {
            out += "\n" + notes.map { "- " + $0 }.joined(separator: "\n") + "\n"
        }
        return out
    }
}
