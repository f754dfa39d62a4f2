package datasets

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"path"
	"path/filepath"
)

// Partitioned data: shards (files) of rows, each row at a position (shard
// name, data row number), assigned to a partition and held out for testing
// by seeded hashes of its position alone. A distributed reader knows a
// row's position but not its global index, so these play the part that
// SplitIndex plays for one table.

// MaxPartitions bounds the number of partitions of a partitioned fit.
const MaxPartitions = 1 << 20

// ShardName returns the name of a shard that enters the position of its rows:
// the last element of its path (a local path, or a URL such as
// gs://bucket/dir/part-0001.csv), so that the same file read through another
// mount point or file system keeps its rows' positions.
func ShardName(source string) string {
	return path.Base(filepath.ToSlash(source))
}

// positionHash is a seeded 64-bit hash of a row position (shard name, data
// row number, 1-based) under a domain tag: FNV-1a over the tag, the seed, the
// name and the row, then the splitmix64 finalizer. It reads no cell.
func positionHash(tag string, seed uint64, shard string, row int) uint64 {
	const (
		offset = 14695981039346656037
		prime  = 1099511628211
	)
	h := uint64(offset)
	add := func(b []byte) {
		for _, c := range b {
			h ^= uint64(c)
			h *= prime
		}
	}
	var buf [8]byte
	add([]byte(tag))
	binary.LittleEndian.PutUint64(buf[:], seed)
	add(buf[:])
	add([]byte(shard))
	add([]byte{0})
	binary.LittleEndian.PutUint64(buf[:], uint64(row))
	add(buf[:])
	return mix64(h)
}

// mix64 is the splitmix64 finalizer.
func mix64(z uint64) uint64 {
	z ^= z >> 30
	z *= 0xbf58476d1ce4e5b9
	z ^= z >> 27
	z *= 0x94d049bb133111eb
	return z ^ z>>31
}

// PartitionOf returns the partition in [0, partitions) of the row at
// position (shard, row): a seeded hash of the position, never of the row's
// content, so the partition sizes are public.
func PartitionOf(seed uint64, shard string, row, partitions int) int {
	hi, _ := bits.Mul64(positionHash("stabpriv/partition", seed, shard, row), uint64(partitions))
	return int(hi)
}

// HeldOut reports whether the row at position (shard, row) is held out for
// testing: a seeded hash of the position, uniform in [0, 1), below testFrac.
// It is the split of a partitioned fit (Fit's datasets.SplitIndex needs the
// global row index, which a distributed reader does not have).
func HeldOut(seed uint64, shard string, row int, testFrac float64) bool {
	if testFrac <= 0 {
		return false
	}
	u := float64(positionHash("stabpriv/test", seed, shard, row)>>11) / (1 << 53)
	return u < testFrac
}

// PartitionSeed is the trainer seed of partition p of a partitioned fit
// with seed seed: public, and seed itself for partition 0 (so one
// partition trains as an unpartitioned fit does).
func PartitionSeed(seed uint64, p int) uint64 {
	return seed + uint64(p)*0x9e3779b97f4a7c15
}

// Shard is a shard's name (ShardName) and its number of data rows.
type Shard struct {
	Name string `json:"name"`
	Rows int    `json:"rows"`
}

// PartitionLayout recomputes, from the public shard names and row counts,
// the number of rows read, the number of training rows and every
// partition's size: the functions HeldOut and PartitionOf of the positions
// and the seed.
func PartitionLayout(shards []Shard, seed uint64, testFrac float64, partitions int) (rows, train int, sizes []int, err error) {
	if partitions < 1 || partitions > MaxPartitions || len(shards) == 0 {
		return 0, 0, nil, fmt.Errorf("%w: %d partitions of %d shards", ErrFormat, partitions, len(shards))
	}
	for i, sh := range shards {
		if sh.Rows < 1 || sh.Rows > math.MaxInt-rows || sh.Name == "" || i > 0 && shards[i-1].Name >= sh.Name {
			return 0, 0, nil, fmt.Errorf("%w: shard %q with %d rows: shards need distinct names in order and rows, %d in all at most", ErrFormat, sh.Name, sh.Rows, math.MaxInt)
		}
		rows += sh.Rows
	}
	sizes = make([]int, partitions)
	for _, sh := range shards {
		for i := range sh.Rows {
			row := i + 1
			if HeldOut(seed, sh.Name, row, testFrac) {
				continue
			}
			sizes[PartitionOf(seed, sh.Name, row, partitions)]++
			train++
		}
	}
	return rows, train, sizes, nil
}
