package api

import (
	"encoding/json"
	"net/http"
	"sync"
)

type Note struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

type NoteStore struct {
	mu    sync.Mutex
	notes []Note
	next  int
}

func (s *NoteStore) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		_ = json.NewEncoder(w).Encode(s.notes)
	case http.MethodPost:
		var n Note
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.next++
		n.ID = s.next
		s.notes = append(s.notes, n)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(n)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}
