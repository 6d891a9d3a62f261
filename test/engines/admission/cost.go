package main

// The policy's CEL compiled by Kubernetes' own compiler (k8s.io/apiserver pkg/admission/plugin/cel: the versioned
// base environment of pkg/cel/environment, the admission variables, the JSONPatch types of a mutation), once as a
// new policy is compiled when it is created and once as a stored one is when it is run; then each program run
// on a request for its own cost, which the base environment's programs track against PerCallLimit.

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	"k8s.io/apiserver/pkg/cel/environment"
)

// The expressions of a policy, as printed.
type expressions struct {
	Variables       []named `json:"variables"`
	MatchConditions []named `json:"matchConditions"`
	Mutations       []struct {
		JSONPatch struct {
			Expression string `json:"expression"`
		} `json:"jsonPatch"`
	} `json:"mutations"`
}

type named struct {
	Name       string `json:"name"`
	Expression string `json:"expression"`
}

type program struct {
	name    string
	program cel.Program
}

type compiled struct {
	variables  []program
	conditions []program
	mutations  []program
}

var options = plugincel.OptionalVariableDeclarations{HasParams: false, HasAuthorizer: true}

// compile compiles every expression of SPEC in MODE; the errors name the expression.
func compile(spec expressions, mode environment.Type) (compiled, []string) {
	var out compiled
	var problems []string
	compiler, err := plugincel.NewCompositedCompiler(environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()))
	if err != nil {
		return out, []string{err.Error()}
	}
	keep := func(list *[]program, name string, result plugincel.CompilationResult) {
		if result.Error != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", name, result.Error))
			return
		}
		*list = append(*list, program{name, result.Program})
	}
	for _, v := range spec.Variables {
		keep(&out.variables, "variables."+v.Name, compiler.CompileAndStoreVariable(&mutating.Variable{Name: v.Name, Expression: v.Expression}, options, mode))
	}
	for _, c := range spec.MatchConditions {
		condition := matchconditions.MatchCondition(admissionregistrationv1.MatchCondition{Name: c.Name, Expression: c.Expression})
		keep(&out.conditions, "matchConditions."+c.Name, compiler.CompileCELExpression(&condition, options, mode))
	}
	patchOptions := options
	patchOptions.HasPatchTypes = true
	for i, m := range spec.Mutations {
		keep(&out.mutations, fmt.Sprintf("mutations[%d]", i), compiler.CompileCELExpression(&patch.JSONPatchCondition{Expression: m.JSONPatch.Expression}, patchOptions, mode))
	}
	return out, problems
}

// A request's costs: each expression's own, and all of them together (every variable evaluated, which is at most
// what the API server's lazy evaluation spends).
type costs struct {
	most     int64
	mostName string
	total    int64
	skipped  string
}

func unstructuredOf(object runtime.Object) (map[string]any, error) {
	if object == nil {
		return nil, nil
	}
	return runtime.DefaultUnstructuredConverter.ToUnstructured(object)
}

// measure runs every program of C on one request and returns its costs, and the value of the variable SKIPPED.
func measure(c compiled, operation string, object, old runtime.Object, namespace *corev1.Namespace) (costs, error) {
	var result costs
	objectValue, err := unstructuredOf(object)
	if err != nil {
		return result, err
	}
	oldValue, err := unstructuredOf(old)
	if err != nil {
		return result, err
	}
	namespaceValue, err := unstructuredOf(namespace)
	if err != nil {
		return result, err
	}
	variables := map[string]ref.Val{}
	activation := map[string]any{
		plugincel.ObjectVarName:    objectValue,
		plugincel.OldObjectVarName: oldValue,
		plugincel.NamespaceVarName: namespaceValue,
		plugincel.RequestVarName:   map[string]any{"operation": operation, "namespace": namespace.Name},
		"variables":                variables,
	}
	if oldValue == nil {
		activation[plugincel.OldObjectVarName] = nil
	}
	run := func(p program) (ref.Val, error) {
		value, details, err := p.program.ContextEval(context.Background(), activation)
		if details != nil && details.ActualCost() != nil {
			cost := int64(*details.ActualCost())
			result.total += cost
			if cost > result.most {
				result.most, result.mostName = cost, p.name
			}
		}
		return value, err
	}
	for _, p := range c.variables {
		value, err := run(p)
		if err != nil {
			// Evaluated lazily by the API server: an error counts only where the variable is read.
			continue
		}
		variables[strings.TrimPrefix(p.name, "variables.")] = value
	}
	if skipped, ok := variables["skipped"]; ok {
		result.skipped = fmt.Sprint(skipped.Value())
	}
	for _, p := range c.conditions {
		value, err := run(p)
		if err != nil {
			return result, fmt.Errorf("%s: %w", p.name, err)
		}
		if value.Value() == false {
			result.skipped = p.name
			return result, nil
		}
	}
	for _, p := range c.mutations {
		if _, err := run(p); err != nil {
			return result, fmt.Errorf("%s: %w", p.name, err)
		}
	}
	return result, nil
}
