//go:build v1beta1

package main

import (
	admissionregistration "k8s.io/api/admissionregistration/v1beta1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// The policy's API version this build judges: admissionregistration.k8s.io/v1beta1, Kubernetes 1.34 and 1.35.
const apiVersion = "v1beta1"

// The Kubernetes release whose API server this build stands for.
const kubernetesRelease = "1.35"

type (
	policyType  = admissionregistration.MutatingAdmissionPolicy
	bindingType = admissionregistration.MutatingAdmissionPolicyBinding
)

var addPolicyTypes = admissionregistration.AddToScheme

// At this release the plugin is beta and off by default: the API server's --feature-gates turns it on.
func enableFeature() error {
	return utilfeature.DefaultMutableFeatureGate.Set("MutatingAdmissionPolicy=true")
}
