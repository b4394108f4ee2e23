package webhook

import (
	"encoding/json"
	"errors"
	"io"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// reviewHead is what identifies an AdmissionReview without its objects:
// enough to answer a request that is not judged. The API server accepts
// an answer only when its response.uid is the request's (k8s.io/apiserver
// pkg/admission/plugin/webhook/request/admissionreview.go,
// VerifyAdmissionResponse); any other answer is a failed call, which
// failurePolicy Ignore admits.
type reviewHead struct {
	gvk schema.GroupVersionKind
	req admission.Request
}

// errNoHead is a body that does not start as an AdmissionReview.
var errNoHead = errors.New("not an AdmissionReview")

// readHead streams a body for its review's apiVersion and kind and its
// request's uid, kind, namespace, name and operation, holding one token at
// a time, never the objects: a request refused for its size or for want
// of memory is read this way. It stops at the request's object once it
// has the uid (the API server writes the request's fields in their
// declared order, the objects after the names). It returns what it found
// before an error.
func readHead(r io.Reader) (reviewHead, error) {
	var h reviewHead
	d := json.NewDecoder(r)
	if err := delim(d, '{'); err != nil {
		return h, err
	}
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return h, err
		}
		switch key {
		case "apiVersion":
			s, err := str(d)
			if err != nil {
				return h, err
			}
			if gv, err := schema.ParseGroupVersion(s); err == nil {
				h.gvk.Group, h.gvk.Version = gv.Group, gv.Version
			}
		case "kind":
			if h.gvk.Kind, err = str(d); err != nil {
				return h, err
			}
		case "request":
			if done, err := readRequestHead(d, &h.req.AdmissionRequest); err != nil || done {
				return h, err
			}
		default:
			if err := skip(d); err != nil {
				return h, err
			}
		}
	}
	return h, nil
}

// readRequestHead reads the request's identifying fields; done says it
// stopped at the object, with the uid found.
func readRequestHead(d *json.Decoder, req *admissionv1.AdmissionRequest) (done bool, err error) {
	t, err := d.Token()
	if err != nil {
		return false, err
	}
	if t != json.Delim('{') {
		return false, skipFrom(d, t)
	}
	for d.More() {
		key, err := d.Token()
		if err != nil {
			return false, err
		}
		var s *string
		switch key {
		case "uid":
			var uid string
			uid, err = str(d)
			req.UID = types.UID(uid)
		case "name":
			s = &req.Name
		case "namespace":
			s = &req.Namespace
		case "operation":
			var op string
			op, err = str(d)
			req.Operation = admissionv1.Operation(op)
		case "kind":
			t, err := d.Token()
			if err != nil {
				return false, err
			}
			if t != json.Delim('{') {
				if err := skipFrom(d, t); err != nil {
					return false, err
				}
				continue
			}
			for d.More() {
				k, err := d.Token()
				if err != nil {
					return false, err
				}
				var v string
				if v, err = str(d); err != nil {
					return false, err
				}
				switch k {
				case "group":
					req.Kind.Group = v
				case "version":
					req.Kind.Version = v
				case "kind":
					req.Kind.Kind = v
				}
			}
			if _, err := d.Token(); err != nil {
				return false, err
			}
		case "object", "oldObject":
			if req.UID != "" {
				return true, nil
			}
			err = skip(d)
		default:
			err = skip(d)
		}
		if err != nil {
			return false, err
		}
		if s != nil {
			if *s, err = str(d); err != nil {
				return false, err
			}
		}
	}
	_, err = d.Token()
	return false, err
}

func delim(d *json.Decoder, want json.Delim) error {
	t, err := d.Token()
	if err != nil {
		return err
	}
	if t != want {
		return errNoHead
	}
	return nil
}

// str reads a string, or skips another value and returns "".
func str(d *json.Decoder) (string, error) {
	t, err := d.Token()
	if err != nil {
		return "", err
	}
	if s, ok := t.(string); ok {
		return s, nil
	}
	return "", skipFrom(d, t)
}

// skip reads one value of any size, a token at a time.
func skip(d *json.Decoder) error {
	t, err := d.Token()
	if err != nil {
		return err
	}
	return skipFrom(d, t)
}

// skipFrom skips the rest of the value that starts with t.
func skipFrom(d *json.Decoder, t json.Token) error {
	if t != json.Delim('{') && t != json.Delim('[') {
		return nil
	}
	for depth := 1; depth > 0; {
		t, err := d.Token()
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}
