// The judge of istio-job-run's --admission-policy: the policy the built executable prints, compiled by Kubernetes'
// own CEL compiler and run by Kubernetes' own MutatingAdmissionPolicy plugin (k8s.io/apiserver, the release this
// module pins), on every Job, CronJob and bare Pod of the files a plan names, as CREATE (reinvoked as the admission
// chain reinvokes), again over its own result, and as an UPDATE; each result must be what `--inject` writes for the
// same object, or both leave it. It prints a summary as JSON on stdout, with the largest cost of an expression and
// of a request beside Kubernetes' limits; each disagreement is a line on stderr. Exit 0: all agree; 1: some do not,
// or the API server would not take the policy; 2: bad input.
//
// Usage: admission PLAN.json (test/engines/admission.ts writes it)
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/apiserver/pkg/admission"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/environment"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"
)

type plan struct {
	// The built executable.
	Exe string `json:"exe"`
	// Flags of --admission-policy besides --api-version, and of --inject: the same mode and image.
	PolicyArgs []string `json:"policyArgs"`
	InjectArgs []string `json:"injectArgs"`
	// What every object's namespace carries, and the kinds of sidecar that makes it inject (told to --inject).
	Namespace struct {
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"namespace"`
	InjectedKinds []string `json:"injectedKinds"`
	// A folder where --inject's answers are kept by what it was given, for the runs that follow.
	InjectCache string `json:"injectCache"`
	Inputs      []struct {
		Name string `json:"name"`
		File string `json:"file"`
		// The policy's reasons to leave to --inject an object --inject rewrites (its `skipped` variable).
		AllowSkip []string `json:"allowSkip"`
	} `json:"inputs"`
}

// --inject's refusals for what a script does by itself, which CEL cannot read: the policy may wrap such a pod.
var refusalLine = regexp.MustCompile(`^[^:]+: [^:]+:[0-9]+: `)

var scriptStatus = regexp.MustCompile(`script ends with 0 after the job failed|--check finds bashism-under-sh`)

type summary struct {
	APIServer    string   `json:"apiserver"`
	APIVersion   string   `json:"apiVersion"`
	Objects      int      `json:"objects"`
	Rewritten    int      `json:"rewritten"`
	Same         int      `json:"same"`
	LeftToInject []string `json:"leftToInject"`
	ScriptStatus []string `json:"scriptStatus"`
	NotTaken     []string `json:"notTaken"`
	Failures     []string `json:"failures"`
	Cost         struct {
		Expression     int64  `json:"expression"`
		ExpressionName string `json:"expressionName"`
		ExpressionAt   string `json:"expressionAt"`
		Request        int64  `json:"request"`
		RequestAt      string `json:"requestAt"`
		PerCallLimit   int64  `json:"perCallLimit"`
		RuntimeBudget  int64  `json:"runtimeBudget"`
	} `json:"cost"`
}

func main() {
	// The plugin's informers log to stderr, which is for disagreements here.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "admission: usage: admission PLAN.json")
		os.Exit(2)
	}
	code, err := run(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "admission: %v\n", err)
	}
	os.Exit(code)
}

func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				return dep.Version
			}
		}
	}
	return "unknown"
}

func run(planFile string) (int, error) {
	var p plan
	text, err := os.ReadFile(planFile)
	if err != nil {
		return 2, err
	}
	if err := json.Unmarshal(text, &p); err != nil {
		return 2, fmt.Errorf("%s: %w", planFile, err)
	}
	out := summary{APIServer: moduleVersion("k8s.io/apiserver"), APIVersion: apiVersion, LeftToInject: []string{}, ScriptStatus: []string{}, NotTaken: []string{}, Failures: []string{}}
	out.Cost.PerCallLimit, out.Cost.RuntimeBudget = celconfig.PerCallLimit, celconfig.RuntimeCELCostBudget
	fail := func(format string, args ...any) {
		line := fmt.Sprintf(format, args...)
		out.Failures = append(out.Failures, line)
		fmt.Fprintln(os.Stderr, "disagrees: "+line)
	}

	scheme, err := newScheme()
	if err != nil {
		return 2, err
	}
	codecs := serializer.NewCodecFactory(scheme)
	printed, err := exec.Command(p.Exe, append([]string{"--admission-policy", "--api-version", apiVersion}, p.PolicyArgs...)...).Output()
	if err != nil {
		return 2, fmt.Errorf("%s --admission-policy: %w", p.Exe, err)
	}
	policy, binding, spec, err := loadPolicy(printed, codecs)
	if err != nil {
		return 1, fmt.Errorf("the printed policy: %w", err)
	}
	// Accepted: every expression compiles as a new policy's does; then the stored form, which the plugin runs.
	if _, problems := compile(spec, environment.NewExpressions); len(problems) > 0 {
		return 1, fmt.Errorf("Kubernetes' CEL compiler refuses the policy: %s", strings.Join(problems, "; "))
	}
	programs, problems := compile(spec, environment.StoredExpressions)
	if len(problems) > 0 {
		return 1, fmt.Errorf("Kubernetes' CEL compiler refuses the stored policy: %s", strings.Join(problems, "; "))
	}
	srv, err := newServer(scheme, policy, binding)
	if err != nil {
		return 2, err
	}
	defer srv.close()

	objects, err := readObjects(p)
	if err != nil {
		return 2, err
	}
	decode := func(data []byte) (runtime.Object, error) {
		object, _, err := codecs.UniversalDeserializer().Decode(data, nil, nil)
		return object, err
	}
	// Each object as the API server holds it: decoded into its type (what the type has no field for, or an empty
	// list, is gone), then as JSON; that is what the plugin and --inject are both given.
	typed := make([]runtime.Object, len(objects))
	for i, o := range objects {
		object, err := decode(o.json)
		if err != nil {
			continue
		}
		// Created in the namespace of the request (kubectl's default one) when it names none.
		if accessor, err := meta.Accessor(object); err == nil && accessor.GetNamespace() == "" {
			accessor.SetNamespace(metav1.NamespaceDefault)
		}
		typed[i] = object
		objects[i].json, _ = json.MarshalIndent(object, "", " ")
	}
	injected := injectAll(p, objects)
	for i, o := range objects {
		out.Objects++
		object := typed[i]
		if object == nil {
			_, err := decode(o.json)
			out.NotTaken = append(out.NotTaken, fmt.Sprintf("%s: %v", o.name, err))
			continue
		}
		ns := namespaceOf(p, object)
		if err := srv.namespace(ns); err != nil {
			return 2, err
		}
		inj := injected[i]
		if inj.err != nil {
			fail("%s: --inject: %v", o.name, inj.err)
			continue
		}
		measured := func(what string, operation string, in, old runtime.Object) costs {
			c, err := measure(programs, operation, in, old, ns)
			if err != nil {
				fail("%s: %s: %v", o.name, what, err)
			}
			if c.most > out.Cost.Expression {
				out.Cost.Expression, out.Cost.ExpressionName, out.Cost.ExpressionAt = c.most, c.mostName, o.name+" ("+what+")"
			}
			if c.total > out.Cost.Request {
				out.Cost.Request, out.Cost.RequestAt = c.total, o.name+" ("+what+")"
			}
			return c
		}
		created := measured("CREATE", "CREATE", object, nil)
		admitted, err := srv.admit(admission.Create, object, nil)
		if err != nil {
			fail("%s: CREATE: the policy fails: %v", o.name, err)
			continue
		}
		changed := canonical(object) != canonical(admitted)
		if inj.verdict == "refused" && len(inj.refusals) > 0 && all(inj.refusals, scriptStatus.MatchString) {
			out.ScriptStatus = append(out.ScriptStatus, o.name)
			continue
		}
		if inj.verdict != "rewritten" {
			if changed {
				fail("%s: the policy rewrites what --inject %s", o.name, map[string]string{"left": "leaves", "refused": "refuses"}[inj.verdict])
			}
			continue
		}
		out.Rewritten++
		if !changed {
			if slices.Contains(o.allowSkip, created.skipped) {
				out.LeftToInject = append(out.LeftToInject, o.name)
			} else {
				fail("%s: --inject rewrites it, the policy leaves it (%s)", o.name, created.skipped)
			}
			continue
		}
		expected, err := decode(inj.output)
		if err != nil {
			fail("%s: what --inject wrote is not an object: %v", o.name, err)
			continue
		}
		if where := difference(canonical(admitted), canonical(expected)); where != "" {
			fail("%s: the policy's object differs from --inject's: %s", o.name, where)
			continue
		}
		measured("again", "CREATE", admitted, nil)
		again, err := srv.admit(admission.Create, admitted, nil)
		if err != nil || canonical(again) != canonical(admitted) {
			fail("%s: a second pass of the policy changes it (%v)", o.name, err)
			continue
		}
		measured("UPDATE", "UPDATE", object, admitted)
		updated, err := srv.admit(admission.Update, object, admitted)
		if err != nil || canonical(updated) != canonical(admitted) {
			fail("%s: an UPDATE with the object as first written does not come back as stored (%v)", o.name, err)
			continue
		}
		out.Same++
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", " ")
	if err := encoder.Encode(out); err != nil {
		return 2, err
	}
	if len(out.Failures) > 0 {
		return 1, nil
	}
	return 0, nil
}

func all(list []string, test func(string) bool) bool {
	for _, item := range list {
		if !test(item) {
			return false
		}
	}
	return true
}

// loadPolicy decodes the two printed documents strictly (unknown fields refused, as the API server's strict field
// validation refuses them), and judges the policy with failurePolicy Fail, so an error shows instead of being ignored.
func loadPolicy(printed []byte, codecs serializer.CodecFactory) (runtime.Object, runtime.Object, expressions, error) {
	var spec expressions
	documents, err := splitYAML(printed)
	if err != nil {
		return nil, nil, spec, err
	}
	if len(documents) != 2 {
		return nil, nil, spec, fmt.Errorf("%d documents, not a policy and a binding", len(documents))
	}
	var policyMap map[string]any
	if err := json.Unmarshal(documents[0], &policyMap); err != nil {
		return nil, nil, spec, err
	}
	specMap, _ := policyMap["spec"].(map[string]any)
	if specMap == nil {
		return nil, nil, spec, errors.New("no spec")
	}
	specJSON, _ := json.Marshal(specMap)
	if err := json.Unmarshal(specJSON, &spec); err != nil {
		return nil, nil, spec, err
	}
	strict := codecs.UniversalDecoder()
	if info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), runtime.ContentTypeJSON); ok && info.StrictSerializer != nil {
		strict = info.StrictSerializer
	}
	if _, _, err := strict.Decode(documents[0], nil, nil); err != nil {
		return nil, nil, spec, err
	}
	specMap["failurePolicy"] = "Fail"
	// The API server defaults what a stored policy leaves out of its match constraints (every namespace and object,
	// the Equivalent match policy: the defaults the API reference gives for MatchResources); the plugin reads them.
	constraints, _ := specMap["matchConstraints"].(map[string]any)
	if constraints == nil {
		return nil, nil, spec, errors.New("no spec.matchConstraints")
	}
	for field, value := range map[string]any{"namespaceSelector": map[string]any{}, "objectSelector": map[string]any{}, "matchPolicy": "Equivalent"} {
		if _, ok := constraints[field]; !ok {
			constraints[field] = value
		}
	}
	judged, _ := json.Marshal(policyMap)
	policy, _, err := strict.Decode(judged, nil, nil)
	if err != nil {
		return nil, nil, spec, err
	}
	binding, _, err := strict.Decode(documents[1], nil, nil)
	if err != nil {
		return nil, nil, spec, err
	}
	_, isPolicy := policy.(*policyType)
	_, isBinding := binding.(*bindingType)
	if !isPolicy || !isBinding {
		return nil, nil, spec, fmt.Errorf("not a %s MutatingAdmissionPolicy and its binding", apiVersion)
	}
	return policy, binding, spec, nil
}

// splitYAML reads a stream of YAML documents as kubectl does, each as JSON; a document that is not YAML is skipped.
func splitYAML(text []byte) ([][]byte, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(text)))
	var out [][]byte
	for {
		document, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		converted, err := yaml.YAMLToJSON(document)
		if err != nil || bytes.Equal(bytes.TrimSpace(converted), []byte("null")) {
			continue
		}
		out = append(out, converted)
	}
}

type object struct {
	name      string
	json      []byte
	allowSkip []string
}

// readObjects: the Jobs, CronJobs and bare Pods of every input file, in the order written, a List's items too.
func readObjects(p plan) ([]object, error) {
	var out []object
	for _, input := range p.Inputs {
		text, err := os.ReadFile(input.File)
		if err != nil {
			return nil, err
		}
		documents, err := splitYAML(text)
		if err != nil {
			documents = nil
		}
		index := 0
		var collect func(node any)
		collect = func(node any) {
			m, ok := node.(map[string]any)
			if !ok {
				return
			}
			kind, _ := m["kind"].(string)
			if items, ok := m["items"].([]any); ok && strings.HasSuffix(kind, "List") {
				for _, item := range items {
					collect(item)
				}
				return
			}
			if kind != "Job" && kind != "CronJob" && kind != "Pod" {
				return
			}
			name := ""
			if metadata, ok := m["metadata"].(map[string]any); ok {
				name, _ = metadata["name"].(string)
			}
			data, _ := json.MarshalIndent(m, "", " ")
			out = append(out, object{fmt.Sprintf("%s#%d %s %s", input.Name, index, kind, name), data, input.AllowSkip})
			index++
		}
		for _, document := range documents {
			var node any
			if json.Unmarshal(document, &node) == nil {
				collect(node)
			}
		}
	}
	return out, nil
}

func namespaceOf(p plan, object runtime.Object) *corev1.Namespace {
	name := "default"
	if u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(object); err == nil {
		if ns, _, _ := unstructured.NestedString(u, "metadata", "namespace"); ns != "" {
			name = ns
		}
	}
	labels := map[string]string{"kubernetes.io/metadata.name": name}
	for key, value := range p.Namespace.Labels {
		labels[key] = value
	}
	return &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: p.Namespace.Annotations}}
}

type injection struct {
	verdict  string // rewritten, left, refused
	output   []byte
	refusals []string
	err      error
}

// injectAll runs `--inject` on each object alone, as a JSON file, two at a time.
func injectAll(p plan, objects []object) []injection {
	results := make([]injection, len(objects))
	dir, err := os.MkdirTemp("", "engines-inject-")
	if err != nil {
		for i := range results {
			results[i].err = err
		}
		return results
	}
	defer os.RemoveAll(dir)
	var wait sync.WaitGroup
	slots := make(chan struct{}, 2)
	for i, o := range objects {
		wait.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wait.Done() }()
			results[i] = inject(p, o, filepath.Join(dir, fmt.Sprintf("object-%d.json", i)))
		}()
	}
	wait.Wait()
	return results
}

func inject(p plan, o object, file string) injection {
	if err := os.WriteFile(file, o.json, 0o600); err != nil {
		return injection{err: err}
	}
	args := append([]string{"--inject"}, p.InjectArgs...)
	var node map[string]any
	_ = json.Unmarshal(o.json, &node)
	if len(p.InjectedKinds) > 0 {
		ns := "default"
		if metadata, ok := node["metadata"].(map[string]any); ok {
			if name, ok := metadata["namespace"].(string); ok && name != "" {
				ns = name
			}
		}
		var list []string
		for _, kind := range p.InjectedKinds {
			list = append(list, kind+"="+ns)
		}
		args = append(args, "--injected-namespaces", strings.Join(list, ","))
	}
	stdout, stderr, code, err := runInject(p, args, file, o.json)
	switch {
	case err != nil:
		return injection{err: err}
	case code == 0 && bytes.Equal(stdout, o.json):
		return injection{verdict: "left"}
	case code == 0:
		converted, err := yaml.YAMLToJSON(stdout)
		return injection{verdict: "rewritten", output: converted, err: err}
	case code == 1:
		var refusals []string
		for _, line := range strings.Split(strings.TrimSpace(string(stderr)), "\n") {
			// The lines that name a pod (FILE:LINE:), not the closing one.
			if refusalLine.MatchString(line) {
				refusals = append(refusals, line)
			}
		}
		return injection{verdict: "refused", refusals: refusals}
	default:
		return injection{err: fmt.Errorf("exit %d: %s", code, strings.TrimSpace(string(stderr)))}
	}
}

// runInject runs `--inject ARGS FILE` (FILE holds INPUT), or answers from the plan's cache.
func runInject(p plan, args []string, file string, input []byte) ([]byte, []byte, int, error) {
	sum := sha256.Sum256([]byte(strings.Join(args, "\x00") + "\x00" + string(input)))
	key := filepath.Join(p.InjectCache, hex.EncodeToString(sum[:]))
	if p.InjectCache != "" {
		if stored, err := os.ReadFile(key); err == nil {
			var answer struct {
				Stdout, Stderr []byte
				Code           int
			}
			if json.Unmarshal(stored, &answer) == nil {
				return answer.Stdout, answer.Stderr, answer.Code, nil
			}
		}
	}
	command := exec.Command(p.Exe, append(args, file)...)
	var stdout, stderr bytes.Buffer
	command.Stdout, command.Stderr = &stdout, &stderr
	err := command.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		return nil, nil, 0, err
	}
	if p.InjectCache != "" && (code == 0 || code == 1) {
		answer, _ := json.Marshal(map[string]any{"Stdout": stdout.Bytes(), "Stderr": stderr.Bytes(), "Code": code})
		_ = os.MkdirAll(p.InjectCache, 0o700)
		if os.WriteFile(key+".partial", answer, 0o600) == nil {
			_ = os.Rename(key+".partial", key)
		}
	}
	return stdout.Bytes(), stderr.Bytes(), code, nil
}

// canonical: an object as JSON with its maps' keys sorted, after the typed round trip the API server makes.
func canonical(object runtime.Object) string {
	data, err := json.Marshal(object)
	if err != nil {
		return "error: " + err.Error()
	}
	var plain map[string]any
	if err := json.Unmarshal(data, &plain); err != nil {
		return "error: " + err.Error()
	}
	// The kind is the request's; a typed object after conversion may leave it out.
	delete(plain, "apiVersion")
	delete(plain, "kind")
	sorted, _ := json.Marshal(plain)
	return string(sorted)
}

// difference: the first path where two canonical objects differ, or "".
func difference(a, b string) string {
	if a == b {
		return ""
	}
	var x, y any
	_ = json.Unmarshal([]byte(a), &x)
	_ = json.Unmarshal([]byte(b), &y)
	return firstDifference(x, y, "")
}

func firstDifference(a, b any, path string) string {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		names := make([]string, 0, len(keys))
		for k := range keys {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if d := firstDifference(am[k], bm[k], path+"/"+k); d != "" {
				return d
			}
		}
		return ""
	}
	al, aok := a.([]any)
	bl, bok := b.([]any)
	if aok && bok && len(al) == len(bl) {
		for i := range al {
			if d := firstDifference(al[i], bl[i], fmt.Sprintf("%s/%d", path, i)); d != "" {
				return d
			}
		}
		return ""
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	if bytes.Equal(x, y) {
		return ""
	}
	return fmt.Sprintf("%s: %s != %s", path, x, y)
}
