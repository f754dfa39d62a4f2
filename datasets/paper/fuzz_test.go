package paper

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stabpriv/stabpriv/datasets"
	"github.com/stabpriv/stabpriv/datasets/internal/datatest"
)

// Fuzz targets for the parsers of untrusted files: malformed input must give
// an error, never a panic, and accepted input must be consistent.

func FuzzReadAdult(f *testing.F) {
	f.Add(adultLineTrain+"\n", false)
	f.Add("|1x3 Cross validator\n"+adultLineTest+"\n", false)
	f.Add(adultLineMiss+"\n"+adultLineTrain+"\n", true)
	f.Add(strings.Replace(adultLineTrain, "77516", "?", 1), true)
	f.Add("1,2,3\n", false)
	f.Fuzz(func(t *testing.T, in string, keep bool) {
		p, err := readAdult(strings.NewReader(in), "fuzz", keep)
		if err != nil {
			return
		}
		if len(p.records) > p.read {
			t.Fatalf("%d records kept of %d read", len(p.records), p.read)
		}
		for _, r := range p.records {
			if r.missing && !keep {
				t.Fatal("a record with a missing value was kept")
			}
			for _, v := range r.num {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("non-finite numeric value %v", v)
				}
			}
		}
	})
}

func FuzzReadTCGA(f *testing.F) {
	f.Add(tcgaSmallData, tcgaSmallLabels, "")
	f.Add(",g1\ns0,1\ns1,2\n", ",Class\ns0,B\ns1,T\n", "Class")
	f.Add(",g1\ns0,1\ns1,2\ns2,3\n", "id,Class,Sub\ns0,a,x\ns1,b,y\ns2,c,z\n", "Sub")
	f.Add(",g1\ns0,\"1\n", ",Class\ns0,B\n", "")
	f.Fuzz(func(t *testing.T, data, labels, column string) {
		ds, err := ReadTCGA(strings.NewReader(data), strings.NewReader(labels), TCGAOptions{LabelColumn: column})
		if err != nil {
			return
		}
		n, d := ds.X.Dims()
		if len(ds.Y) != n || len(ds.Features) != d {
			t.Fatalf("inconsistent shapes: X %d x %d, %d labels, %d names", n, d, len(ds.Y), len(ds.Features))
		}
		checkFuzzLabels(t, ds)
	})
}

func TestReadAdultLongLine(t *testing.T) {
	_, err := readAdult(strings.NewReader(strings.Repeat("x", 2<<20)), "long", false)
	if !errors.Is(err, ErrAdultFormat) {
		t.Fatalf("err = %v, want ErrAdultFormat", err)
	}
}

// checkFuzzLabels checks the label encoding and that X is finite.
func checkFuzzLabels(t *testing.T, ds *datasets.Dataset) {
	t.Helper()
	datatest.CheckEncoding(t, ds.X, ds.Y, ds.Classes)
}
