#!/usr/bin/python3
"""Idempotent cloud content for configure.sh, with openstacksdk as admin of cloud $OS_CLOUD.

bootstrap.py identity   service project + users, demo project/user, catalog (keystone only needed)
bootstrap.py resources  flavors, public image from $IMAGE_FILE, external network 'public'
"""
import os
import sys

import openstack

conn = openstack.connect(cloud=os.environ.get("OS_CLOUD", "aio"))
REGION = "RegionOne"
SERVICES = {  # type: (name, url)
    "image": ("glance", "http://127.0.0.1:9292"),
    "placement": ("placement", "http://127.0.0.1:8778"),
    "compute": ("nova", "http://127.0.0.1:8774/v2.1"),
    "network": ("neutron", "http://127.0.0.1:9696"),
}
CINDER = {  # only with AIO_CINDER=1; both names of the block-storage v3 service, as DevStack does
    "volumev3": ("cinderv3", "http://127.0.0.1:8776/v3/%(project_id)s"),
    "block-storage": ("cinder", "http://127.0.0.1:8776/v3/%(project_id)s"),
}
FLAVORS = [  # name, ram MiB, vcpus, disk GiB
    ("m1.nano", 128, 1, 1), ("m1.tiny", 512, 1, 1), ("m1.small", 2048, 1, 20),
    ("m1.medium", 4096, 2, 40), ("m1.large", 8192, 4, 80),
]


def project(name, desc):
    idn = conn.identity
    return idn.find_project(name, domain_id="default") or idn.create_project(
        name=name, domain_id="default", description=desc)


def role(name):
    return conn.identity.find_role(name) or conn.identity.create_role(name=name)


def user(name, proj, *roles):
    idn = conn.identity
    u = idn.find_user(name, domain_id="default")
    if u:
        idn.update_user(u, password=os.environ["PASS"])
    else:
        u = idn.create_user(name=name, password=os.environ["PASS"], domain_id="default",
                            default_project_id=proj.id)
    for r in roles:
        idn.assign_project_role_to_user(proj, u, role(r))


def identity():
    idn = conn.identity
    service = project("service", "OpenStack service users")
    cinder = os.environ.get("CINDER") == "1"
    for name in ("glance", "placement", "nova", "neutron") + (("cinder",) if cinder else ()):
        user(name, service, "admin", "service")  # 'service': cinder trusts nova's service token
    user("demo", project("demo", "Unprivileged test project"), "member")
    for typ in CINDER if not cinder else ():
        for svc in idn.services(type=typ):
            for e in idn.endpoints(service_id=svc.id):
                idn.delete_endpoint(e)
            idn.delete_service(svc)
    for typ, (name, url) in dict(SERVICES, **(CINDER if cinder else {})).items():
        svc = next(iter(idn.services(type=typ)), None) or idn.create_service(
            name=name, type=typ, is_enabled=True)
        have = {e.interface: e for e in idn.endpoints(service_id=svc.id)}
        for iface in ("public", "internal", "admin"):
            e = have.get(iface)
            if e is None:
                idn.create_endpoint(service_id=svc.id, interface=iface, url=url, region_id=REGION)
            elif e.url != url:
                idn.update_endpoint(e, url=url)
        print(f"  {typ:10} {url}")


def resources():
    for name, ram, vcpus, disk in FLAVORS:
        f = conn.compute.find_flavor(name, ignore_missing=True)
        if f and (f.ram, f.vcpus, f.disk) != (ram, vcpus, disk):
            conn.compute.delete_flavor(f)  # flavors are immutable; servers keep their copy
            f = None
        if not f:
            conn.compute.create_flavor(name=name, ram=ram, vcpus=vcpus, disk=disk, is_public=True)
    print("  flavors:", ", ".join(f[0] for f in FLAVORS))
    img = conn.image.find_image("aio-tiny")
    if img is not None and img.status != "active":
        conn.image.delete_image(img)
        img = None
    if img is None:
        conn.create_image("aio-tiny", filename=os.environ["IMAGE_FILE"], disk_format="raw",
                          container_format="bare", visibility="public", wait=True)
    print("  image: aio-tiny (1 MiB of zeros, raw; the fake driver never reads it)")
    net = conn.network.find_network("public")
    if net is None:
        net = conn.network.create_network(
            name="public", is_router_external=True, is_shared=False,
            provider_network_type="flat", provider_physical_network="public")
    if not list(conn.network.subnets(network_id=net.id)):
        conn.network.create_subnet(
            name="public-subnet", network_id=net.id, ip_version=4, cidr="198.51.100.0/24",
            gateway_ip="198.51.100.1", is_dhcp_enabled=False,
            allocation_pools=[{"start": "198.51.100.10", "end": "198.51.100.250"}])
    print("  network: public (external, flat, 198.51.100.0/24, no data plane)")


if __name__ == "__main__":
    if len(sys.argv) != 2 or sys.argv[1] not in ("identity", "resources"):
        sys.exit(__doc__)
    globals()[sys.argv[1]]()
