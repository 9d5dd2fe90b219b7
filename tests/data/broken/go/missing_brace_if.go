package config

import (
	"encoding/json"
	"fmt"
	"os"
)

type Config struct {
	Addr     string `json:"addr"`
	LogLevel string `json:"log_level"`
	MaxConns int    `json:"max_conns"`
}

func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg := &Config{Addr: ":8080", LogLevel: "info", MaxConns: 100}
	if err := json.Unmarshal(data, cfg); err != nil {
		return nil, fmt.Errorf("parse config: %w", err)
	}
	if cfg.MaxConns <= 0
		return nil, fmt.Errorf("max_conns must be positive, got %d", cfg.MaxConns)
	}
	return cfg, nil
}

func (c *Config) String() string {
	return fmt.Sprintf("addr=%s level=%s max=%d", c.Addr, c.LogLevel, c.MaxConns)
}
