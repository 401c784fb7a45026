package dev.nodelet.dra.grpc;

import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.DeviceSnapshots;
import java.nio.file.Path;
import java.util.Optional;
import org.osgi.annotation.versioning.ProviderType;

/**
 * One registration of a driver that passed the handshake: the protocol chosen from its {@code supported_versions} and
 * the roles it has, each an object that calls the driver over gRPC on its endpoint. A driver written for the kubelet
 * has {@link #claimPreparation()} and, when it advertised a health service, {@link #healthSource()}; a Nodelet
 * streaming driver has {@link #deviceSnapshots()} only.
 *
 * @since 1.0
 */
@ProviderType
public interface RegisteredPlugin {

  /** The kubelet's DRA API v1, chosen first when a driver offers it. */
  String DRA_V1 = "v1.DRAPlugin";
  /** The kubelet's DRA API v1beta1 (no share IDs). */
  String DRA_V1BETA1 = "v1beta1.DRAPlugin";
  /** Nodelet's snapshot stream, chosen only when a driver offers neither of the kubelet's. */
  String NODELET_V1 = "nodelet.dra.v1";
  /** The kubelet's device health API v1, chosen first. */
  String HEALTH_V1 = "v1.DRAResourceHealth";
  /** The kubelet's device health API v1alpha1. */
  String HEALTH_V1ALPHA1 = "v1alpha1.DRAResourceHealth";

  /** @return the driver name from {@code GetInfo}: a DNS subdomain of at most 63 characters */
  String driverName();

  /** @return the registration socket in the registration folder */
  Path registrationSocket();

  /** @return the socket that serves the driver's protocol: {@code GetInfo}'s endpoint, else the registration socket */
  Path endpoint();

  /** @return the protocol chosen: {@link #DRA_V1}, {@link #DRA_V1BETA1} or {@link #NODELET_V1} */
  String protocol();

  /**
   * @return the health service chosen ({@link #HEALTH_V1}, else {@link #HEALTH_V1ALPHA1}); empty when the driver
   *     advertised none, or speaks {@link #NODELET_V1}
   */
  Optional<String> healthService();

  /** @return calls {@code NodePrepareResources}/{@code NodeUnprepareResources}; for a driver written for the kubelet */
  Optional<ClaimPreparation> claimPreparation();

  /** @return follows {@code NodeWatchResources}; for a driver written for the kubelet that advertised health */
  Optional<DeviceHealthSource> healthSource();

  /** @return follows {@code ListAndWatchResources}; for a Nodelet streaming driver */
  Optional<DeviceSnapshots> deviceSnapshots();
}
