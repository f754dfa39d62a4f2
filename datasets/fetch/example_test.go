package fetch_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/stabpriv/stabpriv/datasets/fetch"
)

// A download is kept only when its SHA-256 is the expected one.
func Example() {
	content := []byte("a,b,y\n1,2,p\n")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(content) }))
	defer srv.Close()
	cache, err := os.MkdirTemp("", "fetch-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(cache)

	sum := sha256.Sum256(content)
	path, err := fetch.File(context.Background(), fetch.Config{
		URL: srv.URL + "/data.csv", SHA256: hex.EncodeToString(sum[:]), CacheDir: cache, Client: srv.Client(),
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(filepath.Base(path))

	wrong := hex.EncodeToString(make([]byte, sha256.Size))
	_, err = fetch.File(context.Background(), fetch.Config{
		URL: srv.URL + "/other.csv", SHA256: wrong, CacheDir: cache, Client: srv.Client(),
	})
	fmt.Println(errors.Is(err, fetch.ErrChecksum))
	_, err = os.Stat(filepath.Join(cache, "other.csv"))
	fmt.Println(errors.Is(err, os.ErrNotExist))
	// Output:
	// data.csv
	// true
	// true
}
