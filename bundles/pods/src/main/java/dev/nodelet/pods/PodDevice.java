package dev.nodelet.pods;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * A device prepared for a container's resource claim, as a service: Nodelet registers one per device of a
 * container (the devices its configuration names under {@link PodBundles#DEVICES}) before the container's bundle
 * starts, visible only to the bundles at the container's location (or below it: {@code <location>/...}), and
 * withdraws it when the pod goes. Other bundles, other pods' included, neither find it nor hear of it.
 *
 * <p>Service properties: {@link #CONTAINER_LOCATION}, {@link #INDEX}, {@link #DRIVER}, {@link #POOL},
 * {@link #DEVICE}, {@link #CLAIM}, {@link #CLAIM_NAME}, {@link #REQUEST} (when the container names one) and
 * {@link PodBundles#POD_NAMESPACE}, {@link PodBundles#POD_NAME}, {@link PodBundles#POD_UID},
 * {@link PodBundles#CONTAINER_NAME}.
 *
 * @since 1.2
 */
@ProviderType
public interface PodDevice {

  /** Service property: the bundle location of the container the device is for. */
  String CONTAINER_LOCATION = "nodelet.container.location";

  /** Service property: the device's index {@code n} among the container's, as in {@code nodelet.device.<n>.}. */
  String INDEX = "nodelet.device.index";

  /** Service property: the driver's name. */
  String DRIVER = "nodelet.device.driver";

  /** Service property: the pool. */
  String POOL = "nodelet.device.pool";

  /** Service property: the device's name in the pool. */
  String DEVICE = "nodelet.device.name";

  /** Service property: the pod's claim entry ({@code spec.resourceClaims[].name}). */
  String CLAIM = "nodelet.device.claim";

  /** Service property: the ResourceClaim's name. */
  String CLAIM_NAME = "nodelet.device.claimName";

  /** Service property: the request the container names in {@code resources.claims}; absent without one. */
  String REQUEST = "nodelet.device.request";

  /** @return the pod's claim entry ({@code spec.resourceClaims[].name}) */
  String claim();

  /** @return the ResourceClaim's name */
  String claimName();

  /** @return the request the container names; empty when it names none (all of the claim's devices) */
  Optional<String> request();

  /** @return the driver's name */
  String driver();

  /** @return the pool */
  String pool();

  /** @return the device's name in the pool */
  String device();

  /** @return its CDI device IDs, such as {@code k8s.gpu.example.com/device=dev-0} */
  List<String> cdiDeviceIds();

  /**
   * @return the attributes the driver publishes for the device in its ResourceSlice, by the name the slice gives
   *     them: Boolean, Long or String (a version as its text); empty when they could not be read
   */
  Map<String, Object> attributes();
}
