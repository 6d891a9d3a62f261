//go:build !v1beta1

package main

import admissionregistration "k8s.io/api/admissionregistration/v1"

// The policy's API version this build judges: admissionregistration.k8s.io/v1, served from Kubernetes 1.36.
const apiVersion = "v1"

// The Kubernetes release whose API server this build stands for.
const kubernetesRelease = "1.36"

type (
	policyType  = admissionregistration.MutatingAdmissionPolicy
	bindingType = admissionregistration.MutatingAdmissionPolicyBinding
)

var addPolicyTypes = admissionregistration.AddToScheme

// The plugin is on by default at this release.
func enableFeature() error { return nil }
