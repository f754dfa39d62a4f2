package datasets

import (
	"math"
	"strings"
	"testing"
)

// FuzzReadBounds: any input is read or refused with an error wrapping
// ErrSchema, never a panic; what is read validates, its column names
// included (CheckName).
func FuzzReadBounds(f *testing.F) {
	f.Add("column,lo,hi\nage,0,120\nincome,-1e6,1e7\n")
	f.Add("a,1,2\n# a comment\nb,-3,3\n")
	f.Add("a,2,1\n")
	f.Add("a,NaN,1\n")
	f.Add("a,0,Inf\n")
	f.Add("\"a,b\",0,1\n")
	f.Add("a,0,1\na,0,1\n")
	f.Add("a,-1.7976931348623157e308,1.7976931348623157e308\n")
	f.Add("b\xe9,0,1\n")
	f.Add("\"a\x01\",0,1\n")
	f.Fuzz(func(t *testing.T, in string) {
		bs, err := ReadBounds(strings.NewReader(in))
		if err != nil {
			if !strings.Contains(err.Error(), ErrSchema.Error()) {
				t.Fatalf("error %v does not wrap ErrSchema", err)
			}
			return
		}
		if len(bs) == 0 {
			t.Fatal("no bounds and no error")
		}
		seen := map[string]bool{}
		for _, b := range bs {
			if b.Column == "" || seen[b.Column] || CheckName(b.Column) != nil || !(b.Lo < b.Hi) || math.IsInf(b.Hi-b.Lo, 0) {
				t.Fatalf("invalid bound read: %+v", b)
			}
			seen[b.Column] = true
		}
	})
}

// FuzzReadCategories: any input is read or refused with an error wrapping
// ErrSchema, never a panic; what is read validates and names each column
// once with at least one category.
func FuzzReadCategories(f *testing.F) {
	f.Add("workclass,Private,Self-emp-not-inc,?\nsex,Female,Male\n")
	f.Add("# comment\n\"a,b\",x,\"y \"\"z\"\"\"\n")
	f.Add("a\n")
	f.Add("a,x,x\n")
	f.Add("a,x\na,y\n")
	f.Add("a, x ,\n")
	f.Add("a,x,b\xe9\n")
	f.Fuzz(func(t *testing.T, in string) {
		cs, err := ReadCategories(strings.NewReader(in))
		if err != nil {
			if !strings.Contains(err.Error(), ErrSchema.Error()) {
				t.Fatalf("error %v does not wrap ErrSchema", err)
			}
			return
		}
		if len(cs) == 0 {
			t.Fatal("no declaration and no error")
		}
		if err := ValidateCategories(cs); err != nil {
			t.Fatalf("read %+v, which does not validate: %v", cs, err)
		}
	})
}
