package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"testing"
)

func TestCertsChainToTheCA(t *testing.T) {
	dir := t.TempDir()
	if err := writeCerts(dir); err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, caCert))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA certificate does not parse")
	}
	for _, c := range []struct {
		cert, key string
		usage     x509.ExtKeyUsage
		dns       string
	}{
		{servingCert, servingKey, x509.ExtKeyUsageServerAuth, "localhost"},
		{adminCert, adminKey, x509.ExtKeyUsageClientAuth, ""},
	} {
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, c.cert), filepath.Join(dir, c.key))
		if err != nil {
			t.Fatalf("%s: %v", c.cert, err)
		}
		leaf, err := x509.ParseCertificate(pair.Certificate[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: c.dns, KeyUsages: []x509.ExtKeyUsage{c.usage}}); err != nil {
			t.Errorf("%s does not verify: %v", c.cert, err)
		}
	}
	admin, _ := tls.LoadX509KeyPair(filepath.Join(dir, adminCert), filepath.Join(dir, adminKey))
	leaf, _ := x509.ParseCertificate(admin.Certificate[0])
	if leaf.Subject.Organization[0] != "system:masters" {
		t.Errorf("admin certificate is not in system:masters: %v", leaf.Subject)
	}
	for _, f := range []string{saKey, saPub} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	var out, errOut nopWriter
	if code := run(nil, &out, &errOut); code != 2 {
		t.Errorf("no subcommand: exit %d", code)
	}
	if code := run([]string{"bogus"}, &out, &errOut); code != 2 {
		t.Errorf("unknown subcommand: exit %d", code)
	}
	if code := run([]string{"etcd"}, &out, &errOut); code != 2 {
		t.Errorf("etcd without --data-dir: exit %d", code)
	}
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
