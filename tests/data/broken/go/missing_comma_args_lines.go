package store

import (
	"database/sql"
	"time"
)

type User struct {
	ID        int64
	Email     string
	Name      string
	CreatedAt time.Time
}

func InsertUser(db *sql.DB, u *User) error {
	u.CreatedAt = time.Now().UTC()
	result, err := db.Exec(
		"INSERT INTO users (email, name, created_at) VALUES (?, ?, ?)",
		u.Email
		u.Name,
		u.CreatedAt,
	)
	if err != nil {
		return err
	}
	u.ID, err = result.LastInsertId()
	return err
}

func FindUser(db *sql.DB, email string) (*User, error) {
	u := &User{}
	row := db.QueryRow("SELECT id, email, name, created_at FROM users WHERE email = ?", email)
	if err := row.Scan(&u.ID, &u.Email, &u.Name, &u.CreatedAt); err != nil {
		return nil, err
	}
	return u, nil
}
