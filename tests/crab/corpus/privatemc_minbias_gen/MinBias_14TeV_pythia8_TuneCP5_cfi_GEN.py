import FWCore.ParameterSet.Config as cms
process = cms.Process('GEN')
process.source = cms.Source('EmptySource')
process.generator = cms.EDFilter('Pythia8GeneratorFilter', comEnergy=cms.double(14000.0))
process.generation_step = cms.Path(process.generator)
