// Package partition is partitioned training: Fit assigns the rows of
// several shards to partitions by a seeded hash of their positions
// (placement.PartitionOf), trains each partition by SGD, and releases the
// weighted average of the partitions' weights once, by output perturbation,
// with the sensitivity of the average (stability.AnalyzePartitioned). Plan
// holds the same algorithm in the steps that a distributed runner (the
// Beam pipeline of the nested module github.com/stabpriv/stabpriv/beam)
// calls on its workers, so the pipeline and Fit compute the same release
// from the same shards. docs/DESIGN.md, section 7, holds the proof. Without
// a named mechanism the release follows a public rule (RuleMechanism,
// docs/DESIGN.md section 12.1).
package partition
