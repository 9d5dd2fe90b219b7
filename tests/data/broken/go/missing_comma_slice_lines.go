package main

import (
	"fmt"
	"net/http"
	"os"
	"time"
)

var endpoints = []string{
	"https://example.com/healthz",
	"https://api.example.com/v1/status"
	"https://cdn.example.com/ping",
}

func check(client *http.Client, url string) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return fmt.Errorf("status %d", resp.StatusCode)
	}
	return nil
}

func main() {
	client := &http.Client{Timeout: 5 * time.Second}
	failed := 0
	for _, url := range endpoints {
		if err := check(client, url); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", url, err)
			failed++
		}
	}
	if failed > 0 {
		os.Exit(1)
	}
}
