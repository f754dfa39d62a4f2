package datasets

import (
	"errors"
	"reflect"
	"testing"
)

func TestOneHotEncoder(t *testing.T) {
	enc, err := FitOneHot([]string{"color", "size"}, [][]string{{"red", "L"}, {"blue", "S"}, {"red", "M"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"color=blue", "color=red", "size=L", "size=M", "size=S"}
	if got := enc.FeatureNames(); !reflect.DeepEqual(got, want) {
		t.Fatalf("FeatureNames = %v, want %v", got, want)
	}
	dst := make([]float64, enc.Width())
	if err := enc.Encode(dst, []string{"red", "S"}); err != nil {
		t.Fatal(err)
	}
	if want := []float64{0, 1, 0, 0, 1}; !reflect.DeepEqual(dst, want) {
		t.Errorf("Encode = %v, want %v", dst, want)
	}
	if err := enc.Encode(dst, []string{"green", "S"}); !errors.Is(err, ErrUnknownCategory) {
		t.Errorf("unknown category: err = %v", err)
	}
	if err := enc.Encode(dst, []string{"red"}); err == nil {
		t.Error("short row: no error")
	}
	if _, err := FitOneHot([]string{"a"}, [][]string{{"x", "y"}}); err == nil {
		t.Error("ragged fit rows: no error")
	}
}
