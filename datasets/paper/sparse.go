package paper

import (
	"sort"

	"gonum.org/v1/gonum/mat"
)

// sparseRowMatrix is a compressed-sparse-row matrix. It implements
// mat.Matrix (At is a binary search) and the fast products of preprocess.Operator.
type sparseRowMatrix struct {
	rows, cols int
	indptr     []int // row i holds entries indptr[i]:indptr[i+1]
	indices    []int // column of each entry, increasing within a row
	data       []float64
}

// newSparseIndicator returns the 0/1 matrix whose row i has ones in the
// columns listed in rows[i] (duplicates count once).
func newSparseIndicator(cols int, rows [][]int) *sparseRowMatrix {
	m := &sparseRowMatrix{rows: len(rows), cols: cols, indptr: make([]int, 1, len(rows)+1)}
	for _, r := range rows {
		sort.Ints(r)
		for k, c := range r {
			if k > 0 && c == r[k-1] {
				continue
			}
			m.indices = append(m.indices, c)
			m.data = append(m.data, 1)
		}
		m.indptr = append(m.indptr, len(m.indices))
	}
	return m
}

// newAdjacency returns the symmetric 0/1 adjacency matrix of an undirected
// graph on n nodes (repeated edges count once; a self-loop sets the
// diagonal).
func newAdjacency(n int, edges [][2]int) *sparseRowMatrix {
	rows := make([][]int, n)
	for _, e := range edges {
		rows[e[0]] = append(rows[e[0]], e[1])
		if e[0] != e[1] {
			rows[e[1]] = append(rows[e[1]], e[0])
		}
	}
	return newSparseIndicator(n, rows)
}

func (m *sparseRowMatrix) Dims() (int, int) { return m.rows, m.cols }

func (m *sparseRowMatrix) At(i, j int) float64 {
	if i < 0 || i >= m.rows || j < 0 || j >= m.cols {
		panic(mat.ErrIndexOutOfRange)
	}
	row := m.indices[m.indptr[i]:m.indptr[i+1]]
	k := sort.SearchInts(row, j)
	if k < len(row) && row[k] == j {
		return m.data[m.indptr[i]+k]
	}
	return 0
}

func (m *sparseRowMatrix) T() mat.Matrix { return mat.Transpose{Matrix: m} }

func (m *sparseRowMatrix) MulTo(dst, b *mat.Dense) {
	dst.Zero()
	for i := range m.rows {
		out := dst.RawRowView(i)
		for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
			v, in := m.data[k], b.RawRowView(m.indices[k])
			for c := range out {
				out[c] += v * in[c]
			}
		}
	}
}

func (m *sparseRowMatrix) MulTransTo(dst, b *mat.Dense) {
	dst.Zero()
	for i := range m.rows {
		in := b.RawRowView(i)
		for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
			v, out := m.data[k], dst.RawRowView(m.indices[k])
			for c := range out {
				out[c] += v * in[c]
			}
		}
	}
}

// mulSparse returns the sparse product m o (m.cols == o.rows).
func (m *sparseRowMatrix) mulSparse(o *sparseRowMatrix) *sparseRowMatrix {
	p := &sparseRowMatrix{rows: m.rows, cols: o.cols, indptr: make([]int, 1, m.rows+1)}
	acc := make([]float64, o.cols)
	var touched []int
	for i := range m.rows {
		touched = touched[:0]
		for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
			j, v := m.indices[k], m.data[k]
			for kk := o.indptr[j]; kk < o.indptr[j+1]; kk++ {
				c := o.indices[kk]
				if acc[c] == 0 {
					touched = append(touched, c)
				}
				acc[c] += v * o.data[kk]
			}
		}
		sort.Ints(touched)
		for _, c := range touched {
			if acc[c] != 0 {
				p.indices = append(p.indices, c)
				p.data = append(p.data, acc[c])
			}
			acc[c] = 0
		}
		p.indptr = append(p.indptr, len(p.indices))
	}
	return p
}

// hstackSparse returns [a | b] (a.rows == b.rows).
func hstackSparse(a, b *sparseRowMatrix) *sparseRowMatrix {
	h := &sparseRowMatrix{rows: a.rows, cols: a.cols + b.cols, indptr: make([]int, 1, a.rows+1)}
	for i := range a.rows {
		for k := a.indptr[i]; k < a.indptr[i+1]; k++ {
			h.indices = append(h.indices, a.indices[k])
			h.data = append(h.data, a.data[k])
		}
		for k := b.indptr[i]; k < b.indptr[i+1]; k++ {
			h.indices = append(h.indices, a.cols+b.indices[k])
			h.data = append(h.data, b.data[k])
		}
		h.indptr = append(h.indptr, len(h.indices))
	}
	return h
}

// toDense returns m as a dense matrix.
func (m *sparseRowMatrix) toDense() *mat.Dense {
	d := mat.NewDense(m.rows, m.cols, nil)
	for i := range m.rows {
		row := d.RawRowView(i)
		for k := m.indptr[i]; k < m.indptr[i+1]; k++ {
			row[m.indices[k]] = m.data[k]
		}
	}
	return d
}
