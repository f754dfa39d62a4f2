package stabbeam

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/partition"
	"gonum.org/v1/gonum/mat"
)

// Pack is a group of training rows travelling as one element: the rows
// of one read block that fall in one partition (at most packRows of
// them), the rows of one block with one privacy ID, or the c rows kept
// for one privacy ID (boundFn). The rows are packed: their model inputs
// in one slice, their positions as shard indices and row numbers, so an
// element costs the runner a few slices, not a string, a slice and a
// struct per row. The pack coder (encodePack) writes the floats as raw
// little-endian words.
//
// The rows of a pack are in position order (shard name, then row number;
// in a fit per privacy ID, slot order once bounded), so a partition is
// put in position order by sorting its packs (trainFn).
type Pack struct {
	// Names are the shard names the rows refer to; a null row (the
	// padding of a privacy ID) refers to the name "".
	Names []string
	// Shard is each row's index in Names; nil when every row is of
	// Names[0].
	Shard []uint32
	// Row is each row's 1-based data row number in its shard (0 for a
	// null row).
	Row []int64
	// X holds the rows' model inputs, len(Row) x D, row by row; Y their
	// labels.
	X []float64
	Y []float64
	D int
	// ID is the privacy ID of every row of the pack in a fit per privacy
	// ID ("" otherwise); Bounded marks a pack of the c rows kept for the
	// ID, whose slots are the rows' indices.
	ID      string
	Bounded bool
}

// Len returns the number of rows of p.
func (p *Pack) Len() int { return len(p.Row) }

// name returns the shard name of row i.
func (p *Pack) name(i int) string {
	if p.Shard == nil {
		return p.Names[0]
	}
	return p.Names[p.Shard[i]]
}

// add appends a row to p.
func (p *Pack) add(name string, row int, x []float64, y float64) {
	k := slices.Index(p.Names, name)
	if k < 0 {
		k = len(p.Names)
		p.Names = append(p.Names, name)
	}
	if k > 0 && p.Shard == nil {
		p.Shard = make([]uint32, len(p.Row), cap(p.Row))
	}
	if p.Shard != nil {
		p.Shard = append(p.Shard, uint32(k))
	}
	p.Row = append(p.Row, int64(row))
	p.X = append(p.X, x...)
	p.Y = append(p.Y, y)
}

// rows returns the rows of p as partition rows of partition part (their
// slots their indices in a bounded pack).
func (p *Pack) rows(part int) []partition.Row {
	out := make([]partition.Row, p.Len())
	for i := range out {
		out[i] = partition.Row{Shard: p.name(i), Row: int(p.Row[i]), Partition: part, X: p.X[i*p.D : (i+1)*p.D], Y: p.Y[i], ID: p.ID}
		if p.Bounded {
			out[i].Slot = i
		}
	}
	return out
}

// check returns an error wrapping ErrInput for a pack whose slices
// disagree (a pack no encoder of this package writes).
func (p *Pack) check() error {
	n := p.Len()
	switch {
	case p.D < 1 || len(p.X) != n*p.D || len(p.Y) != n || (p.Shard != nil && len(p.Shard) != n) || len(p.Names) == 0 && n > 0:
		return fmt.Errorf("%w: a pack of %d rows with %d inputs of width %d, %d labels, %d shard indices and %d names", ErrInput, n, len(p.X), p.D, len(p.Y), len(p.Shard), len(p.Names))
	}
	for _, k := range p.Shard {
		if int(k) >= len(p.Names) {
			return fmt.Errorf("%w: a pack row of shard %d of %d", ErrInput, k, len(p.Names))
		}
	}
	return nil
}

// encodePack is the coder of Pack: lengths as uvarints, the strings as
// bytes, the numbers as little-endian 32- or 64-bit words.
func encodePack(p Pack) []byte {
	n := p.Len()
	size := 16 + 8*len(p.Names) + 4*len(p.Shard) + 8*n + 8*len(p.X) + 8*n + len(p.ID)
	for _, s := range p.Names {
		size += len(s)
	}
	b := make([]byte, 0, size)
	b = binary.AppendUvarint(b, uint64(len(p.Names)))
	for _, s := range p.Names {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(n))
	b = binary.AppendUvarint(b, uint64(p.D))
	flags := uint64(0)
	if p.Shard != nil {
		flags |= 1
	}
	if p.Bounded {
		flags |= 2
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(len(p.ID)))
	b = append(b, p.ID...)
	for _, k := range p.Shard {
		b = binary.LittleEndian.AppendUint32(b, k)
	}
	for _, r := range p.Row {
		b = binary.LittleEndian.AppendUint64(b, uint64(r))
	}
	for _, v := range p.X {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	for _, v := range p.Y {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b
}

// packReader reads the fields encodePack wrote.
type packReader struct {
	b   []byte
	err error
}

func (r *packReader) uvarint() int {
	v, k := binary.Uvarint(r.b)
	if k <= 0 || v > math.MaxInt32 {
		r.fail()
		return 0
	}
	r.b = r.b[k:]
	return int(v)
}

func (r *packReader) bytes(n int) []byte {
	if n > len(r.b) {
		r.fail()
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *packReader) fail() {
	if r.err == nil {
		r.err = fmt.Errorf("%w: a truncated or malformed pack of rows", ErrInput)
	}
	r.b = nil
}

// decodePack decodes a Pack encoded by encodePack.
func decodePack(b []byte) (Pack, error) {
	r := &packReader{b: b}
	var p Pack
	if k := r.uvarint(); k > 0 {
		p.Names = make([]string, k)
		for i := range p.Names {
			p.Names[i] = string(r.bytes(r.uvarint()))
		}
	}
	n := r.uvarint()
	p.D = r.uvarint()
	flags := r.uvarint()
	p.ID = string(r.bytes(r.uvarint()))
	p.Bounded = flags&2 != 0
	if r.err == nil && len(r.b) != n*(4*int(flags&1)+16)+8*n*p.D {
		r.fail()
	}
	if r.err != nil {
		return Pack{}, r.err
	}
	if flags&1 != 0 {
		p.Shard = make([]uint32, n)
		for i := range p.Shard {
			p.Shard[i] = binary.LittleEndian.Uint32(r.b[4*i:])
		}
		r.b = r.b[4*n:]
	}
	p.Row = make([]int64, n)
	for i := range p.Row {
		p.Row[i] = int64(binary.LittleEndian.Uint64(r.b[8*i:]))
	}
	r.b = r.b[8*n:]
	p.X = make([]float64, n*p.D)
	for i := range p.X {
		p.X[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b[8*i:]))
	}
	r.b = r.b[8*n*p.D:]
	p.Y = make([]float64, n)
	for i := range p.Y {
		p.Y[i] = math.Float64frombits(binary.LittleEndian.Uint64(r.b[8*i:]))
	}
	return p, p.check()
}

// segment is where a pack's rows went in a partition's matrix (arrival
// order) and where they belong (position order).
type segment struct {
	id     string // the privacy ID of a bounded pack
	name   string // the shard of a pack of one shard
	first  int64  // its first and last row numbers
	last   int64
	off, n int // rows [off, off+n) of the matrix on arrival
	dest   int // the first row of the segment in position order
}

func compareSegments(a, b segment) int {
	if c := strings.Compare(a.id, b.id); c != 0 {
		return c
	}
	if c := strings.Compare(a.name, b.name); c != 0 {
		return c
	}
	return cmp.Compare(a.first, b.first)
}

// partitionMatrix builds the matrix of partition p (size rows of width d)
// from its packs, read from next one at a time: each pack's rows are
// copied into one preallocated matrix as they arrive, and the matrix is
// then put in position order in place (the rows of a pack are in
// position order, and the packs of a partition do not interleave: two
// packs of one shard hold disjoint ranges of rows, a bounded pack all of
// one privacy ID). So the partition is held once, and the order is the
// one partition.Plan.TrainPartition sorts rows into. bounded says the
// fit is per privacy ID, whose partitions receive bounded packs only. A
// pack of another width or kind, more or fewer rows than size, two packs
// that overlap (a row twice) or a privacy ID twice are errors wrapping
// ErrInput or datasets.ErrFormat.
func partitionMatrix(p, size, d int, bounded bool, next func(*Pack) bool) (*mat.Dense, []float64, error) {
	if size < 1 {
		return nil, nil, fmt.Errorf("%w: partition %d received rows, its layout none", ErrInput, p)
	}
	data := make([]float64, size*d)
	y := make([]float64, size)
	var segs []segment
	off := 0
	var pk Pack
	for next(&pk) {
		n := pk.Len()
		if err := pk.check(); err != nil {
			return nil, nil, err
		}
		if pk.Bounded != bounded {
			return nil, nil, fmt.Errorf("%w: partition %d of a fit with privacy IDs %v received a pack of rows bounded %v", ErrInput, p, bounded, pk.Bounded)
		}
		if pk.D != d {
			return nil, nil, fmt.Errorf("%w: partition %d received rows of %d inputs, want %d", ErrInput, p, pk.D, d)
		}
		if off+n > size {
			return nil, nil, fmt.Errorf("%w: partition %d received more than the %d rows of its layout", ErrInput, p, size)
		}
		if n == 0 {
			pk = Pack{}
			continue
		}
		s := segment{off: off, n: n, first: pk.Row[0], last: pk.Row[n-1]}
		if pk.Bounded {
			s.id = pk.ID
		} else {
			if pk.Shard != nil {
				return nil, nil, fmt.Errorf("%w: partition %d received an unbounded pack of rows of several shards", ErrInput, p)
			}
			s.name = pk.Names[0]
			for i := 1; i < n; i++ {
				if pk.Row[i] <= pk.Row[i-1] {
					return nil, nil, fmt.Errorf("%w: partition %d: pack of shard %s with row %d after row %d", ErrInput, p, s.name, pk.Row[i], pk.Row[i-1])
				}
			}
		}
		copy(data[off*d:], pk.X)
		copy(y[off:], pk.Y)
		segs = append(segs, s)
		off += n
		pk = Pack{}
	}
	if off != size {
		return nil, nil, fmt.Errorf("%w: partition %d received %d rows, its layout %d", ErrInput, p, off, size)
	}
	// The segments in position order, each given its first row there.
	order := make([]int, len(segs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return compareSegments(segs[a], segs[b]) })
	at := 0
	for i, k := range order {
		s := segs[k]
		if i > 0 {
			prev := segs[order[i-1]]
			if s.id != "" && s.id == prev.id {
				return nil, nil, fmt.Errorf("%w: partition %d received privacy ID %q twice", ErrInput, p, s.id)
			}
			if s.id == "" && s.name == prev.name && s.first <= prev.last {
				return nil, nil, fmt.Errorf("%w: row %s:%d appears twice (partition %d)", datasets.ErrFormat, s.name, s.first, p)
			}
		}
		segs[k].dest = at
		at += s.n
	}
	permuteRows(data, y, d, segs)
	return mat.NewDense(size, d, data), y, nil
}

// permuteRows moves every row of every segment (in arrival order, by
// off) to its place in position order, in place: each cycle of the
// permutation is followed with one spare row.
func permuteRows(data, y []float64, d int, segs []segment) {
	n := len(y)
	to := func(i int) int {
		k, _ := slices.BinarySearchFunc(segs, i, func(s segment, i int) int {
			switch {
			case i < s.off:
				return 1
			case i >= s.off+s.n:
				return -1
			}
			return 0
		})
		return segs[k].dest + i - segs[k].off
	}
	done := make([]uint64, (n+63)/64)
	tmp := make([]float64, d)
	for i := range n {
		if done[i/64]&(1<<(i%64)) != 0 {
			continue
		}
		j := to(i)
		if j == i {
			done[i/64] |= 1 << (i % 64)
			continue
		}
		// Carry row i to j, the row there to its place, and so on
		// around the cycle back to i.
		copy(tmp, data[i*d:(i+1)*d])
		ty := y[i]
		for cur := j; cur != i; cur = to(cur) {
			row := data[cur*d : (cur+1)*d]
			for k := range tmp {
				tmp[k], row[k] = row[k], tmp[k]
			}
			ty, y[cur] = y[cur], ty
			done[cur/64] |= 1 << (cur % 64)
		}
		copy(data[i*d:(i+1)*d], tmp)
		y[i] = ty
		done[i/64] |= 1 << (i % 64)
	}
}
