package placement

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
)

// MaxPartitions bounds the number of partitions of a partitioned fit.
const MaxPartitions = 1 << 20

// InputRoot returns the input root of a shard pattern (a local glob, or a
// URL such as gs://bucket/dir/*/part-*.csv): its directories before the
// first path element that holds a wildcard (*, ? or [), ending in a slash,
// or "" for a local pattern whose first element has one. A pattern without
// a wildcard names one file: its root is its directory.
func InputRoot(pattern string) string {
	prefix, rest := splitScheme(pattern)
	elems := strings.Split(rest, "/")
	root := 0
	for root < len(elems)-1 && !strings.ContainsAny(elems[root], "*?[") {
		root++
	}
	if root == 0 {
		return prefix
	}
	return prefix + strings.Join(elems[:root], "/") + "/"
}

// splitScheme splits a URL into its scheme and authority ("gs://bucket/")
// and its path; a local pattern is cleaned and slash separated, with an
// empty prefix (or "/" when absolute).
func splitScheme(pattern string) (prefix, rest string) {
	if i := strings.Index(pattern, "://"); i > 0 {
		prefix, rest = pattern[:i+3], pattern[i+3:]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			return prefix + rest[:j+1], rest[j+1:]
		}
		return prefix + rest + "/", ""
	}
	p := filepath.ToSlash(filepath.Clean(pattern))
	if strings.HasPrefix(p, "/") {
		return "/", strings.TrimLeft(p, "/")
	}
	return "", p
}

// ShardNames returns the shard names of files under the input root root
// (InputRoot of the pattern that listed them): each file's path relative
// to root, slash separated. A file outside root, a name that is not a
// clean relative path (CheckShardName) and two files with the same name are
// errors wrapping datasets.ErrFormat.
func ShardNames(root string, files []string) ([]string, error) {
	names := make([]string, len(files))
	seen := make(map[string]string, len(files))
	for i, f := range files {
		name := f
		if !strings.Contains(f, "://") {
			name = filepath.ToSlash(filepath.Clean(f))
			if root == "" && strings.HasPrefix(name, "/") {
				return nil, fmt.Errorf("%w: shard %s is absolute and the input root is the working directory", datasets.ErrFormat, f)
			}
		}
		if !strings.HasPrefix(name, root) {
			return nil, fmt.Errorf("%w: shard %s is not under the input root %q", datasets.ErrFormat, f, root)
		}
		name = strings.TrimPrefix(name, root)
		if err := CheckShardName(name); err != nil {
			return nil, fmt.Errorf("shard %s: %w", f, err)
		}
		if g, dup := seen[name]; dup {
			return nil, fmt.Errorf("%w: shards %s and %s have the same name %q under the input root %q", datasets.ErrFormat, g, f, name, root)
		}
		seen[name] = f
		names[i] = name
	}
	return names, nil
}

// CheckShardName returns an error wrapping datasets.ErrFormat unless name can be a
// shard's name: a clean, slash-separated relative path (no ".", ".." or
// empty element, no leading slash, no backslash), a name a model file can
// hold (datasets.CheckName: valid UTF-8 without control characters).
func CheckShardName(name string) error {
	if name == "" || strings.HasPrefix(name, "/") || strings.Contains(name, `\`) || path.Clean(name) != name || name == "." ||
		slices.Contains(strings.Split(name, "/"), "..") {
		return fmt.Errorf("%w: shard name %q, want a clean relative path under the input root (e.g. dt=1/part-0.csv)", datasets.ErrFormat, name)
	}
	if err := datasets.CheckName(name); err != nil {
		return fmt.Errorf("%w: shard name %w: rename the file", datasets.ErrFormat, err)
	}
	return nil
}

// ReadShards reads every local file that pattern matches (filepath.Glob),
// in name order, as the shards of a partitioned fit: each table's Source is
// its shard name (ShardNames under InputRoot(pattern)). It is the reader of
// the in-process twin of the Beam pipeline (stabpriv train --partitions),
// which names its shards the same way. A non-nil header names the columns
// of files without a header row (datasets.ReadTableFileHeader). No match is an
// error wrapping datasets.ErrFormat.
func ReadShards(pattern string, header []string) ([]*datasets.Table, error) {
	files, err := filepath.Glob(filepath.Clean(pattern))
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", datasets.ErrFormat, pattern, err)
	}
	if len(files) == 0 {
		root := InputRoot(pattern)
		if root == "" {
			root = "." // the working directory
		}
		return nil, fmt.Errorf("%w: %q matches no file under the input root %q", datasets.ErrFormat, pattern, root)
	}
	slices.Sort(files)
	names, err := ShardNames(InputRoot(pattern), files)
	if err != nil {
		return nil, err
	}
	out := make([]*datasets.Table, len(files))
	for i, f := range files {
		t, err := datasets.ReadTableFileHeader(f, header)
		if err != nil {
			return nil, err
		}
		t.Source = names[i]
		out[i] = t
	}
	return out, nil
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
// content, so the partition sizes are public. The hash is FNV-1a over a
// domain tag, the seed (8 bytes, little endian), the shard name (its path
// relative to the input root, ShardNames), a zero byte and the row number
// (8 bytes), finished by the splitmix64 mixer; the partition is the high 64
// bits of hash * partitions (Lemire's multiply-shift reduction).
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
		return 0, 0, nil, fmt.Errorf("%w: %d partitions of %d shards", datasets.ErrFormat, partitions, len(shards))
	}
	for i, sh := range shards {
		if sh.Rows < 1 || sh.Rows > math.MaxInt-rows || sh.Name == "" || i > 0 && shards[i-1].Name >= sh.Name {
			return 0, 0, nil, fmt.Errorf("%w: shard %q with %d rows: shards need distinct names in order and rows, %d in all at most", datasets.ErrFormat, sh.Name, sh.Rows, math.MaxInt)
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
