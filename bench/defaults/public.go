package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// The public tables of issue 27's defaults benchmark: tables that Debian
// packages install (python3-sklearn's bundled data, R packages), written
// raw under the benchmark's data directory at bench time (never
// committed). Raw means as the source holds them: text columns stay text,
// missing cells stay as the source writes them (R's NA), so that the
// default fit is what a new user gets with --data, --label, --classes and
// the budget. The only flags beyond those are --ignore for ID columns,
// named in each table's description.

// sklearnDir is where Debian's python3-sklearn installs scikit-learn's
// bundled data sets.
const sklearnDir = "/usr/lib/python3/dist-packages/sklearn/datasets/data/"

// sklearnTable is a data set bundled with scikit-learn: a CSV file whose
// first line is "rows,features,class names..." and whose rows are the
// features then the class index, no header.
type sklearnTable struct {
	file     string
	features []string // scikit-learn's feature_names
	label    string
	about    string
}

var sklearnTables = map[string]sklearnTable{
	"iris": {file: "iris.csv", label: "species",
		features: []string{"sepal length (cm)", "sepal width (cm)", "petal length (cm)", "petal width (cm)"},
		about:    "Fisher's iris (scikit-learn's copy): 4 measurements, three species"},
	"wine": {file: "wine_data.csv", label: "cultivar",
		features: []string{"alcohol", "malic_acid", "ash", "alcalinity_of_ash", "magnesium", "total_phenols",
			"flavanoids", "nonflavanoid_phenols", "proanthocyanins", "color_intensity", "hue",
			"od280/od315_of_diluted_wines", "proline"},
		about: "UCI wine recognition (scikit-learn's copy): 13 chemical measurements of different scales (proline in the hundreds, hue near 1), three cultivars"},
}

// prepareSklearn writes the bundled table t as a CSV file with a header
// (scikit-learn's feature names, then the label) at path, each label the
// class name of the file's first line. A missing file (python3-sklearn not
// installed) is an fs.ErrNotExist error: prepare skips the data set.
func prepareSklearn(name string, t sklearnTable, path string) (dataSet, error) {
	src := sklearnDir + t.file
	f, err := os.Open(src)
	if err != nil {
		return dataSet{}, fmt.Errorf("%w (apt-get install python3-sklearn)", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	head, err := r.Read()
	if err != nil {
		return dataSet{}, fmt.Errorf("%s: %w", src, err)
	}
	if len(head) < 4 || head[1] != strconv.Itoa(len(t.features)) {
		return dataSet{}, fmt.Errorf("%s: first line %q, want rows,%d,class names", src, strings.Join(head, ","), len(t.features))
	}
	classes := head[2:]
	rows, err := copyRecords(path, src, r, append(slices.Clone(t.features), t.label), func(rec []string, row int) error {
		c, err := strconv.Atoi(rec[len(rec)-1])
		if len(rec) != len(t.features)+1 || err != nil || c < 0 || c >= len(classes) {
			return fmt.Errorf("%s, row %d: %d fields ending in %q, want %d features and a class index below %d", src, row, len(rec), rec[len(rec)-1], len(t.features), len(classes))
		}
		rec[len(rec)-1] = classes[c]
		return nil
	})
	if err != nil {
		return dataSet{}, err
	}
	if want := head[0]; want != strconv.Itoa(rows) {
		return dataSet{}, fmt.Errorf("%s: %d rows, its first line says %s", src, rows, want)
	}
	return dataSet{name: name, file: path, label: t.label, classes: classes, rows: rows,
		made: fmt.Sprintf("%s (%s%s: %d rows, %d features, %d classes)", t.about, sklearnDir, t.file, rows, len(t.features), len(classes))}, nil
}

// rTable is a data set of an R package that Debian installs (r-cran-*),
// written by R's write.csv as the package holds it: factors as their
// labels, missing values as NA.
type rTable struct {
	deb     string // the Debian package
	pkg     string // the R package
	expr    string // the R expression of the table
	label   string
	classes []string
	// ignore are the table's ID columns, left out by --ignore (the only
	// flag beyond the budget).
	ignore []string
	about  string
}

var rTables = map[string]rTable{
	"pima": {deb: "r-cran-mass", pkg: "MASS", expr: "rbind(MASS::Pima.tr, MASS::Pima.te)", label: "type", classes: []string{"No", "Yes"},
		about: "MASS's Pima Indians diabetes records (Pima.tr then Pima.te, the complete cases): 7 numeric measurements, diabetes yes or no"},
	"biopsy": {deb: "r-cran-mass", pkg: "MASS", expr: "MASS::biopsy", label: "class", classes: []string{"benign", "malignant"}, ignore: []string{"ID"},
		about: "MASS's biopsy (the Wisconsin breast cancer biopsies): 9 cytology scores of 1 to 10, V6 with 16 missing cells; the sample ID left out (--ignore ID)"},
	"fgl": {deb: "r-cran-mass", pkg: "MASS", expr: "MASS::fgl", label: "type", classes: []string{"WinF", "WinNF", "Veh", "Con", "Tabl", "Head"},
		about: "MASS's forensic glass fragments: the refractive index and 8 oxide weights (Ba, Fe mostly 0), six glass types, 9 to 76 rows each"},
	"crabs": {deb: "r-cran-mass", pkg: "MASS", expr: "MASS::crabs", label: "sp", classes: []string{"B", "O"}, ignore: []string{"index"},
		about: "MASS's Leptograpsus crabs: sex (text) and 5 body measurements, colour form B or O; index, the crab's number within its group, left out (--ignore index)"},
	"survey": {deb: "r-cran-mass", pkg: "MASS", expr: "MASS::survey", label: "Sex", classes: []string{"Female", "Male"},
		about: "MASS's student survey: 6 numeric and 6 text columns (handedness, smoking, exercise...), 107 missing cells, one missing label (a null row)"},
	"birthwt": {deb: "r-cran-mass", pkg: "MASS", expr: "subset(MASS::birthwt, select = -bwt)", label: "low", classes: []string{"0", "1"},
		about: "MASS's birth weights: the mother's age, weight, race, smoking and history (8 numeric columns), low birth weight 0 or 1; the birth weight bwt itself is not written (low is bwt < 2.5 kg: it would be the label)"},
	"colon": {deb: "r-cran-survival", pkg: "survival", expr: "survival::colon", label: "status", classes: []string{"0", "1"}, ignore: []string{"id"},
		about: "survival's colon cancer trial (two records per patient: recurrence and death): the treatment (text), 13 numeric columns with 82 missing cells, event 0 or 1; the patient id left out (--ignore id)"},
	"pbc": {deb: "r-cran-survival", pkg: "survival", expr: "survival::pbc", label: "status", classes: []string{"0", "1", "2"}, ignore: []string{"id"},
		about: "survival's primary biliary cirrhosis patients: sex (text) and 17 numeric columns, heavy-tailed (bilirubin, alkaline phosphatase, copper), 1,033 missing cells (106 patients outside the trial miss most), status censored, transplant or dead; the id left out (--ignore id)"},
	"flchain": {deb: "r-cran-survival", pkg: "survival", expr: "subset(survival::flchain, select = -chapter)", label: "death", classes: []string{"0", "1"},
		about: "survival's serum free light chain study: sex (text) and 8 numeric columns, heavy-tailed (kappa, lambda, creatinine), 1,350 missing creatinine cells, death 0 or 1; the cause of death (chapter, missing for the living: it would be the label) is not written"},
	"chile": {deb: "r-cran-cardata", pkg: "carData", expr: "carData::Chile", label: "vote", classes: []string{"A", "N", "U", "Y"},
		about: "carData's 1988 Chilean plebiscite survey: region, sex, education (text), population, age, income, status quo score, 127 missing feature cells, the vote (abstain, no, undecided, yes; 168 missing: null rows)"},
	"mplsstops": {deb: "r-cran-cardata", pkg: "carData", expr: "carData::MplsStops", label: "problem", classes: []string{"suspicious", "traffic"}, ignore: []string{"idNum"},
		about: "carData's Minneapolis police stops of 2017: the stop's time stamp, 8 text columns (race, gender, neighbourhood of 87, ...), position and precinct, 73,976 missing cells, the stop's reason suspicious or traffic; the stop's ID left out (--ignore idNum)"},
}

// rScript writes the table of its first argument's R expression as a CSV
// file at its second argument; exit status 3 when the package is not
// installed.
const rScript = `a <- commandArgs(TRUE); if (!requireNamespace(a[1], quietly = TRUE)) quit(status = 3); write.csv(eval(parse(text = a[2])), a[3], row.names = FALSE)`

// prepareR writes the R table t at path by Rscript and checks it: every
// label is a declared class or missing (NA, a null row), and the ignored
// columns exist. No Rscript, or the package not installed, is an
// fs.ErrNotExist error: prepare skips the data set.
func prepareR(name string, t rTable, path string) (dataSet, error) {
	rs, err := exec.LookPath("Rscript")
	if err != nil {
		return dataSet{}, fmt.Errorf("%w: Rscript (apt-get install r-base-core %s)", fs.ErrNotExist, t.deb)
	}
	out, err := exec.Command(rs, "--vanilla", "-e", rScript, t.pkg, t.expr, path).CombinedOutput()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 3 {
		return dataSet{}, fmt.Errorf("%w: the R package %s (apt-get install %s)", fs.ErrNotExist, t.pkg, t.deb)
	}
	if err != nil {
		return dataSet{}, fmt.Errorf("Rscript %s: %w: %s", t.expr, err, strings.TrimSpace(string(out)))
	}
	rows, cols, missing, err := checkTable(path, t.label, t.classes, t.ignore)
	if err != nil {
		return dataSet{}, err
	}
	ds := dataSet{name: name, file: path, label: t.label, classes: t.classes, rows: rows,
		made: fmt.Sprintf("%s (%s from Debian's %s: %d rows, %d columns with the label, %d missing cells)", t.about, t.expr, t.deb, rows, cols, missing)}
	if len(t.ignore) > 0 {
		ds.flags = []string{"--ignore", strings.Join(t.ignore, ",")}
	}
	return ds, nil
}

// checkTable reads the CSV file at path and returns its data rows, its
// columns and its NA cells, or an error when the label column or an
// ignored column is absent or a label is neither a declared class nor NA.
func checkTable(path, label string, classes, ignore []string) (rows, cols, missing int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	li := slices.Index(head, label)
	if li < 0 {
		return 0, 0, 0, fmt.Errorf("%s: no label column %q in %q", path, label, head)
	}
	for _, c := range ignore {
		if !slices.Contains(head, c) {
			return 0, 0, 0, fmt.Errorf("%s: no column %q to ignore in %q", path, c, head)
		}
	}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows, len(head), missing, nil
		}
		if err != nil {
			return 0, 0, 0, fmt.Errorf("%s: %w", path, err)
		}
		rows++
		for _, v := range rec {
			if v == "NA" {
				missing++
			}
		}
		if v := rec[li]; v != "NA" && !slices.Contains(classes, v) {
			return 0, 0, 0, fmt.Errorf("%s, row %d: label %q is not a declared class %q", path, rows, v, classes)
		}
	}
}
