package main

// The API server's side: Kubernetes' MutatingAdmissionPolicy admission plugin, made by the registry the API server
// makes it from, initialised as the server initialises it (a client, informers, a REST mapper, an authorizer, the
// feature gates), wrapped in the reinvocation handler of the admission chain, and fed the policy and binding through
// its informers. The client is client-go's fake; its discovery serves the OpenAPI v3 documents client-go ships
// (openapitest), which the plugin's JSON Patch reads the objects' schemas from.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/initializer"
	"k8s.io/apiserver/pkg/admission/plugin/policy/mutating"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/discovery"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/openapi"
	"k8s.io/client-go/openapi/openapitest"
	"k8s.io/component-base/compatibility"
)

type resource struct {
	gvk schema.GroupVersionKind
	gvr schema.GroupVersionResource
}

var resources = map[string]resource{
	"Job":     {batchv1.SchemeGroupVersion.WithKind("Job"), batchv1.SchemeGroupVersion.WithResource("jobs")},
	"CronJob": {batchv1.SchemeGroupVersion.WithKind("CronJob"), batchv1.SchemeGroupVersion.WithResource("cronjobs")},
	"Pod":     {corev1.SchemeGroupVersion.WithKind("Pod"), corev1.SchemeGroupVersion.WithResource("pods")},
}

// A discovery whose OpenAPI v3 documents are client-go's own copies of the API server's.
type openAPIDiscovery struct{ discovery.DiscoveryInterface }

func (openAPIDiscovery) OpenAPIV3() openapi.Client { return openapitest.NewEmbeddedFileClient() }

type openAPIClient struct {
	kubernetes.Interface
}

func (c openAPIClient) Discovery() discovery.DiscoveryInterface {
	return openAPIDiscovery{c.Interface.Discovery()}
}

type emptyConfig struct{}

func (emptyConfig) ConfigFor(string) (io.Reader, error) { return nil, nil }

type server struct {
	scheme  *runtime.Scheme
	client  *fake.Clientset
	handler admission.MutationInterface
	objects admission.ObjectInterfaces
	ns      map[string]bool
	stop    chan struct{}
}

func newScheme() (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, batchv1.AddToScheme, addPolicyTypes} {
		if err := add(scheme); err != nil {
			return nil, err
		}
	}
	return scheme, nil
}

// newServer starts the plugin with POLICY and BINDING stored, and waits until its informers have them.
func newServer(scheme *runtime.Scheme, policy, binding runtime.Object) (*server, error) {
	if err := enableFeature(); err != nil {
		return nil, err
	}
	client := fake.NewClientset(policy, binding)
	factory := informers.NewSharedInformerFactory(client, 0)
	mapper := meta.NewDefaultRESTMapper(nil)
	for _, r := range resources {
		mapper.AddSpecific(r.gvk, r.gvr, r.gvr.GroupVersion().WithResource(strings.TrimSuffix(r.gvr.Resource, "s")), meta.RESTScopeNamespace)
	}
	stop := make(chan struct{})
	plugins := admission.NewPlugins()
	mutating.Register(plugins)
	init := initializer.New(openAPIClient{client}, dynamicfake.NewSimpleDynamicClient(scheme), factory,
		authorizerfactory.NewAlwaysAllowAuthorizer(), utilfeature.DefaultFeatureGate,
		compatibility.NewEffectiveVersionFromString(kubernetesRelease, "", ""), stop, mapper)
	chain, err := plugins.NewFromPlugins([]string{mutating.PluginName}, emptyConfig{}, init, nil)
	if err != nil {
		return nil, fmt.Errorf("the admission plugin: %w", err)
	}
	factory.Start(stop)
	factory.WaitForCacheSync(stop)
	handler, ok := chain.(admission.MutationInterface)
	if !ok {
		return nil, errors.New("the admission chain does not mutate")
	}
	return &server{scheme, client, handler, admission.NewObjectInterfacesFromScheme(scheme), map[string]bool{}, stop}, nil
}

func (s *server) close() { close(s.stop) }

// namespace stores NS once (its labels and annotations are the same for every object of a run).
func (s *server) namespace(ns *corev1.Namespace) error {
	if s.ns[ns.Name] {
		return nil
	}
	_, err := s.client.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	s.ns[ns.Name] = true
	return nil
}

// admit runs one request through the admission chain, as the API server does for a CREATE or an UPDATE: the
// plugin, and its reinvocation when the policy changed the object. It returns the object as admitted.
func (s *server) admit(operation admission.Operation, object, old runtime.Object) (runtime.Object, error) {
	accessor, err := meta.Accessor(object)
	if err != nil {
		return nil, err
	}
	r := resources[object.GetObjectKind().GroupVersionKind().Kind]
	var options runtime.Object = &metav1.CreateOptions{}
	if operation == admission.Update {
		options = &metav1.UpdateOptions{}
	}
	// The type converter reads the schemas in the background when the plugin starts: until it has them, the
	// plugin answers ServiceUnavailable, as a starting API server does.
	deadline := time.Now().Add(30 * time.Second)
	for {
		in := object.DeepCopyObject()
		var oldCopy runtime.Object
		if old != nil {
			oldCopy = old.DeepCopyObject()
		}
		attributes := admission.NewAttributesRecord(in, oldCopy, r.gvk, accessor.GetNamespace(), accessor.GetName(), r.gvr, "",
			operation, options, false, &user.DefaultInfo{Name: "engines"})
		err = s.handler.Admit(context.Background(), attributes, s.objects)
		if err == nil {
			// As stored and as read back: with its kind, which the conversion in admission leaves out.
			admitted := attributes.GetObject()
			admitted.GetObjectKind().SetGroupVersionKind(r.gvk)
			return admitted, nil
		}
		if !apierrors.IsServiceUnavailable(err) || time.Now().After(deadline) {
			return nil, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
