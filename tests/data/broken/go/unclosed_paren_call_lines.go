package main

import (
	"flag"
	"log"
	"net/http"
	"time"
)

func logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		next.ServeHTTP(w, r)
		log.Printf("%s %s %s", r.Method, r.URL.Path, time.Since(start))
	})
}

func main() {
	addr := flag.String("addr", ":8000", "address to listen on")
	dir := flag.String("dir", ".", "directory to serve")
	flag.Parse()

	server := &http.Server{
		Addr:         *addr,
		Handler:      logRequests(http.FileServer(http.Dir(*dir))),
		ReadTimeout:  10 * time.Second,
		WriteTimeout: 30 * time.Second,
	}
	log.Printf(
		"serving %s on %s",
		*dir,
		*addr,
	log.Fatal(server.ListenAndServe())
}
