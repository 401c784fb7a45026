package dev.nodelet.dra.claims;

import java.util.List;

/**
 * The CDI device IDs that one {@code resources.claims[]} entry of a container gets, as the kubelet hands them to the
 * container runtime, or why it cannot get them yet.
 *
 * <p>Where the kubelet fails the container's start ({@code GetResources}: the pod's claim entry cannot be resolved to
 * a ResourceClaim, or the claim has no prepared record), the entry has no CDI IDs and an {@link #error()} saying
 * why; a container runtime must not start the container while any of its entries has one. An entry whose claim
 * template produced no claim ({@code status.resourceClaimStatuses[].resourceClaimName} null) needs no devices: no
 * CDI IDs and no error, as the kubelet skips it.
 *
 * @param podNamespace the pod's namespace
 * @param podName the pod's name
 * @param container the container's name (init and regular containers alike)
 * @param podClaim the pod's claim entry ({@code spec.resourceClaims[].name})
 * @param request the request the container names, or {@code null} for all of the claim's devices
 * @param cdiDeviceIds the CDI device IDs; empty while the claim is not prepared
 * @param error why the entry has no devices yet: the entry names no {@code spec.resourceClaims} entry, names neither a
 *     claim nor a template, its template claim is not created yet, or its ResourceClaim is not prepared (not known
 *     to the claim manager yet, being prepared, failed with the error given, or being unprepared); {@code null} when
 *     the entry is ready (since 3.1)
 */
public record ContainerDevices(String podNamespace, String podName, String container, String podClaim,
    String request, List<String> cdiDeviceIds, String error) {

  /** Copies the list. */
  public ContainerDevices {
    cdiDeviceIds = List.copyOf(cdiDeviceIds);
  }

  /** An entry without an error. */
  public ContainerDevices(String podNamespace, String podName, String container, String podClaim, String request,
      List<String> cdiDeviceIds) {
    this(podNamespace, podName, container, podClaim, request, cdiDeviceIds, null);
  }

  /**
   * @return whether the container may be started with this entry: no error
   * @since 3.1
   */
  public boolean ready() {
    return error == null;
  }
}
