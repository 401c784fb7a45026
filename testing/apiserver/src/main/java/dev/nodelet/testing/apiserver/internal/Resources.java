package dev.nodelet.testing.apiserver.internal;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** The resources the server serves, with what discovery says of them and the fabric8 model class of each. */
final class Resources {

  static final List<String> VERBS = List.of("create", "delete", "deletecollection", "get", "list", "patch",
      "update", "watch");
  static final List<String> SUBRESOURCE_VERBS = List.of("get", "patch", "update");

  /** One served resource: {@code group} is empty for the core group. */
  record Resource(String group, String version, String plural, String singular, String kind, boolean namespaced,
      List<String> shortNames, List<String> subresources, Class<? extends HasMetadata> type) {

    String apiVersion() {
      return group.isEmpty() ? version : group + "/" + version;
    }
  }

  static final List<Resource> ALL = List.of(
      core("pods", "pod", "Pod", true, List.of("po"), List.of("status", "ephemeralcontainers"), Pod.class),
      core("configmaps", "configmap", "ConfigMap", true, List.of("cm"), List.of(), ConfigMap.class),
      core("secrets", "secret", "Secret", true, List.of(), List.of(), Secret.class),
      core("serviceaccounts", "serviceaccount", "ServiceAccount", true, List.of("sa"), List.of(),
          ServiceAccount.class),
      core("services", "service", "Service", true, List.of("svc"), List.of("status"), Service.class),
      core("endpoints", "endpoints", "Endpoints", true, List.of("ep"), List.of(), Endpoints.class),
      core("events", "event", "Event", true, List.of("ev"), List.of(), Event.class),
      core("nodes", "node", "Node", false, List.of("no"), List.of("status"), Node.class),
      core("namespaces", "namespace", "Namespace", false, List.of("ns"), List.of("status"), Namespace.class),
      new Resource("coordination.k8s.io", "v1", "leases", "lease", "Lease", true, List.of(), List.of(),
          Lease.class),
      new Resource("resource.k8s.io", "v1", "resourceslices", "resourceslice", "ResourceSlice", false, List.of(),
          List.of(), ResourceSlice.class),
      new Resource("resource.k8s.io", "v1", "resourceclaims", "resourceclaim", "ResourceClaim", true, List.of(),
          List.of("status"), ResourceClaim.class),
      new Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "resourceclaimtemplate",
          "ResourceClaimTemplate", true, List.of(), List.of(), ResourceClaimTemplate.class),
      new Resource("resource.k8s.io", "v1", "deviceclasses", "deviceclass", "DeviceClass", false, List.of(),
          List.of(), DeviceClass.class));

  private static final Map<String, Resource> BY_PATH = ALL.stream()
      .collect(Collectors.toMap(r -> r.apiVersion() + "/" + r.plural(), r -> r));

  private Resources() {
  }

  private static Resource core(String plural, String singular, String kind, boolean namespaced,
      List<String> shortNames, List<String> subresources, Class<? extends HasMetadata> type) {
    return new Resource("", "v1", plural, singular, kind, namespaced, shortNames, subresources, type);
  }

  /** The resource at {@code apiVersion} (e.g. {@code v1}, {@code resource.k8s.io/v1}) and plural. */
  static Optional<Resource> find(String apiVersion, String plural) {
    return Optional.ofNullable(BY_PATH.get(apiVersion + "/" + plural));
  }

  /** The group versions served, core ({@code v1}) first, in their order of appearance. */
  static Map<String, List<Resource>> byGroupVersion() {
    Map<String, List<Resource>> result = new LinkedHashMap<>();
    for (Resource r : ALL) {
      result.computeIfAbsent(r.apiVersion(), k -> new java.util.ArrayList<>()).add(r);
    }
    return result;
  }
}
