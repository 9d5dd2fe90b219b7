package config

import (
	"os"
	"strconv"
	"time"
)

type Settings struct {
	Port    int
	Debug   bool
	Timeout time.Duration
}

func envInt(name string, fallback int) int {
	if value, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return value
	}
	return fallback
}

func FromEnv() Settings {
	s := Settings{Port: 8080, Timeout: 15 * time.Second}
	s.Port = envInt("PORT", s.Port)
	s.Debug = os.Getenv("DEBUG") == "1")
	if seconds := envInt("TIMEOUT_SECONDS", 0); seconds > 0 {
		s.Timeout = time.Duration(seconds) * time.Second
	}
	return s
}
