package xa

import (
	"errors"
	"regexp"
	"strings"
)

// errKind is what a database error means to the protocol. Errors are
// recognised without importing drivers: by SQLSTATE through the
// SQLState() method pgx's and lib/pq's errors have, else by the text the
// drivers print (pgx: "(SQLSTATE 42704)"; go-sql-driver/mysql: "Error 1397").
type errKind int

const (
	errOther     errKind = iota
	errGone              // no such prepared branch (PG 42704, MySQL XAER_NOTA 1397)
	errBusy              // another session is finishing it (PG 55000 "is busy")
	errDuplicate         // unique violation (PG 23505, MySQL 1062)
	// errRolledBack: MySQL XA_RB* (1402, 1613, 1614), the branch was rolled back
	// (MariaDB ends so a prepared branch that wrote nothing once its
	// session is gone). Done, for a rollback; never taken as a commit.
	errRolledBack
	errNoTable // PG 42P01 undefined_table, MySQL 1146
)

var mysqlNumber = regexp.MustCompile(`\bError ([0-9]{4,5})\b`)

func classify(err error) errKind {
	if err == nil {
		return errOther
	}
	msg := err.Error()
	var st interface{ SQLState() string }
	state := ""
	if errors.As(err, &st) {
		state = st.SQLState()
	} else if i := strings.Index(msg, "(SQLSTATE "); i >= 0 && len(msg) >= i+15 {
		state = msg[i+10 : i+15]
	}
	switch {
	case state == "42704":
		return errGone
	case state == "55000" && strings.Contains(msg, "busy"):
		return errBusy
	case state == "23505":
		return errDuplicate
	case state == "42P01":
		return errNoTable
	case state != "":
		return errOther
	}
	if m := mysqlNumber.FindStringSubmatch(msg); m != nil {
		switch m[1] {
		case "1397":
			return errGone
		case "1062":
			return errDuplicate
		case "1402", "1613", "1614": // XA_RBROLLBACK, XA_RBTIMEOUT, XA_RBDEADLOCK
			return errRolledBack
		case "1146":
			return errNoTable
		}
	}
	return errOther
}
