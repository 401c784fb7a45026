package dev.nodelet.pods;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/**
 * What the component that runs this node's pods as bundles has of them, for shells and tools: registered while that
 * component runs (configuration {@value PodBundles#PID}). Read-only.
 */
@ProviderType
public interface PodsStatus {

  /**
   * @return the pods Nodelet runs, sorted by namespace and name; empty while it has none or waits for a valid
   *     configuration
   * @throws IllegalStateException when the pods' worker did not answer in time (it is busy, e.g. downloading an
   *     image); the message says so
   */
  List<PodInfo> pods();
}
