// Package stabbeam is the partitioned certified pipeline of stabpriv on
// Apache Beam's Go SDK: from CSV shards to one released model, on the
// embedded portable runner prism (the default; direct too) and unchanged on
// a portable job server (prism's, Flink's, Spark's) or Dataflow.
//
// The algorithm is partition.Fit's, and every step calls the same
// code of package private, so both give the same weights from the same
// shards and seeds:
//
//	launch    before the pipeline runs (Launch): the output location (its
//	          scheme registered, writable, never an input shard, an
//	          existing file only with --force: cmd/outfile, as train),
//	          the shards under the input root and every shard's header
//	          and first data row (a header alone is refused), and
//	          the settings (flags, budget, a sensitivity route)
//	reshuffle the listed shards, so that a runner does not fuse their
//	          reading into the worker of the listing
//	split     per shard: one scan of its lines and quotes (no cell
//	          parsed) cuts it into blocks of 2^20 data rows, each knowing
//	          the rows before it, so a row keeps its position. A quoted
//	          cell may hold a line end: the scan counts the quotes, and a
//	          line end is inside a quoted cell exactly when an odd number
//	          precede it, so it cuts only where a row starts (a file whose
//	          quotes do not pair up is one block, whose read fails as the
//	          read of the whole file does). The blocks are reshuffled over
//	          the workers
//	read      per block (a DoFn per block, streamed): parse the rows against the
//	          schema, apply the public preprocessing (bounds or none), and
//	          give each row the partition PartitionOf(seed, shard name, row
//	          number) and the held-out flag HeldOut(...): hashes of the
//	          position, never of the content. A shard's name is its path
//	          relative to the input root (placement.InputRoot: the pattern's
//	          directories before its first wildcard), so Hive-style layouts
//	          (dt=1/part-0.csv, dt=2/part-0.csv) are distinct shards. The
//	          training rows travel packed (Pack): one element holds up to
//	          4096 rows of one partition from one block, their inputs as one
//	          slice of floats (coded as raw little-endian words), their
//	          positions as the shard's name once and the row numbers
//	layout    from the shards' row counts (per privacy ID, from the counts
//	          of the distinct IDs): the partition sizes, checked
//	          (partitions against rows, the batch against every partition,
//	          the routes) before any partition is trained
//	bound     per privacy ID (--privacy-id, --max-rows-per-id c only):
//	          the ID's rows (a pack per ID and chunk) grouped, c of them kept
//	          by a seeded choice and padded with null rows
//	          (partition.Plan.Bound), one pack keyed by the ID's partition,
//	          a hash of the ID; the layout is then c times
//	          the IDs of each partition (partition.Plan.LayoutIDs) and the
//	          noise c times the bound for one row (docs/DESIGN.md, 7.1).
//	          The IDs are counted, not gathered: each block emits its IDs,
//	          the repeats across blocks and shards are removed per ID
//	          (distinctIDs: keyed by the ID, combined per key), and one
//	          combine adds each distinct ID's partition and held-out flag
//	          into a count of P + 1 integers (placement.IDCounts), the side
//	          input of the layout and the release; no worker holds the list
//	          of IDs
//	group     by partition
//	train     per partition: its packs copied, as they arrive, into one
//	          matrix of the layout's size, put in position order in place
//	          (so the partition is held once), the stabpriv trainer with the
//	          seed derived from (seed, p), the automatic knobs from n (a side
//	          input of the row counts); the partitions of one bundle train
//	          in parallel, at most GOMAXPROCS at once
//	combine   all partitions' results into one value
//	release   once, on one worker: sum_p (n_p/n) w_p in partition order,
//	          noise calibrated to the sensitivity of the average; the model
//	          file (stabpriv-model/2) is emitted as the one element of a
//	          PCollection under key 0
//	commit    a GroupByKey: a fusion break, so the runner commits the
//	          release step's output (one draw) before the sink reads it
//	sink      writes the committed bytes to --out, whole or not at all (a
//	          local file renamed into place; a gs:// or s3:// object
//	          committed when its writer closes); a retried sink bundle
//	          writes the same bytes again, and a sink handed two releases
//	          writes neither
//
// The proof that a replaced row moves the average by at most
// max_p (n_p/n) Delta_p = 2L/(mu n) on the strongly convex route is in the
// documentation of partition.Fit.
//
// A pipeline that fails (a shard missing or unreadable, a malformed or
// ragged row, more partitions than training rows, or per privacy ID than
// training IDs, a batch larger than a partition) fails before the release step: nothing is released and no
// model file is written; what can be checked before the pipeline runs
// (the output location, the shards' headers, the settings) is checked at
// launch. The weights of the partitions travel between workers in the
// clear: the job's workers are trusted with the rows, and only the
// released model leaves the job.
//
// Quoted shards are split as the others are, a choice made by measurement
// (BenchmarkQuotedShard; docs/GUIDE.md, Distributed training): on a shard
// of 1M quoted rows the scan takes about 3% of the time of reading the
// shard as one block, and two readers read its blocks about 1.6 times as
// fast as one reads the whole shard. prism embedded hands the read step all
// its blocks in one bundle, so there they are read in sequence and the
// scan is all the split changes.
//
// Exit status. Run's errors tell their class by errors.Is, on every runner
// that reports a worker's error (prism and the portable job servers pass
// its text on, and Run matches the sentinel errors by their messages):
// malformed data (datasets.ErrFormat) and settings the data refuses
// (runflags.SettingsErrors), found at launch or in the pipeline, so that
// stabpriv-beam exits with stabpriv train's status for the same error.
//
// Retries. A distributed runner retries a failed bundle and commits the
// output of each bundle once. A retried release bundle draws new noise,
// but its first draw was never committed, so it never left the job; once
// the release step's output is committed, a retried sink reads that draw
// again. The releases-drawn counter (namespace stabpriv) counts the draws.
package stabbeam
