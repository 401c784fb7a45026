package dev.nodelet.dra.claims;

import java.util.List;

/**
 * The CDI device IDs that one {@code resources.claims[]} entry of a container gets, as the kubelet hands them to the
 * container runtime.
 *
 * @param podNamespace the pod's namespace
 * @param podName the pod's name
 * @param container the container's name (init and regular containers alike)
 * @param podClaim the pod's claim entry ({@code spec.resourceClaims[].name})
 * @param request the request the container names, or {@code null} for all of the claim's devices
 * @param cdiDeviceIds the CDI device IDs, empty while the claim is not prepared
 */
public record ContainerDevices(String podNamespace, String podName, String container, String podClaim,
    String request, List<String> cdiDeviceIds) {

  /** Copies the list. */
  public ContainerDevices {
    cdiDeviceIds = List.copyOf(cdiDeviceIds);
  }
}
