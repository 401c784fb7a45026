package dev.nodelet.pods;

import java.util.List;

/**
 * One pod as Nodelet runs it.
 *
 * @param namespace the pod's namespace
 * @param name the pod's name
 * @param uid the pod's UID
 * @param phase the phase last written to the pod's status ({@code Pending} before the first write)
 * @param reason the reason of a rejected pod ({@code OutOfpods}, {@code Taint}...) or {@code Terminating} while its
 *     containers stop for its deletion; empty otherwise
 * @param containers its containers, in the order of its spec
 */
public record PodInfo(String namespace, String name, String uid, String phase, String reason,
    List<ContainerInfo> containers) {

  /** Copies the list: the record is immutable. */
  public PodInfo {
    containers = List.copyOf(containers);
  }
}
