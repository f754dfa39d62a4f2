// Package placement says where each row of a partitioned fit goes: to
// which partition, to which side of the train/test split and, per privacy
// ID, whether it is kept. Every answer is a seeded hash of public values
// (a row's position, or its privacy ID's text), never of a cell, so the
// partition sizes are public and a distributed reader, which knows a row's
// position but not its global index, places it as the in-process fit does.
// These play the part that datasets.SplitIndex plays for one table.
//
// # Positions
//
// Shards (files) of rows, each row at a position (shard name, data row
// number). A shard's name is its path relative to the input root: the
// directories of the input pattern before its first element with a
// wildcard (InputRoot, ShardNames). So the Hive-style shards
// dt=1/part-0.csv and dt=2/part-0.csv under data/ are distinct, and the
// same files read through another mount point, bucket or file system keep
// their rows' positions (and so their partitions). PartitionOf and HeldOut
// place a row by its position; PartitionLayout recomputes the public
// layout from the shard names and row counts; ReadShards reads the local
// shards of a pattern.
//
// # Privacy IDs
//
// Per-user privacy: every row carries a privacy ID (the text of one
// column), and the unit of privacy is the set of rows of one ID. A fit per
// privacy ID keeps at most c rows of each ID (BoundContributions), pads
// every ID to exactly c rows with null rows, and assigns all the rows of
// one ID to one partition and to one side of the split by seeded hashes of
// the ID's text (IDPartition, IDHeldOut). None of these reads a cell other
// than the ID, nor the rows of another ID. IDCounts carries the public
// layout of a set of IDs as counts that add up, so workers build it one ID
// at a time.
//
// Errors wrap datasets.ErrFormat.
package placement
