package leaseclock

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"strconv"
)

// Instance is a lease owner's default instance name: the host name (cut
// to maxHost bytes, "unknown" when it cannot be read), the pid and a
// random suffix, so two processes on one host never share it.
func Instance(maxHost int) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	if len(host) > maxHost {
		host = host[:maxHost]
	}
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + RandomHex(4)
}

// RandomHex returns 2n random hex digits.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b)
}
